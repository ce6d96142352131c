"""Benchmark and detection figures of `distbench history` (docs/performance.md, docs/history.md).

    python ci/bench_history.py speed --runs 1000 --rows 500      # time history, cold and cached
    python ci/bench_history.py detection --histories 3           # a 20 % step in real noise

Synthetic nights are real run directories (results.csv of the current schema, manifest.json with
start time and git revision) whose rows' statistics come from trials drawn from real launches of
this machine (tests/data/gate-launches.json, ci/bench_gate.py load_launches).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAUNCHES = ROOT / "tests" / "data" / "gate-launches.json"


def read_launches(
    path: Path = LAUNCHES,
) -> tuple[list[dict[str, str]], dict[str, list[list[float]]]]:
    """(cases, launch name -> per-case trial times) as gate-launches.json stores them."""
    data = json.loads(path.read_text())
    return data["cases"], data["launches"]


def result_row(case: dict[str, str], trials: list[float], run_id: str, index: int) -> dict:
    """A ResultRow (as CSV cells) whose statistics are those of `trials`."""
    from distbench.collectors.schema import ResultRow, column_names

    size = int(case["size_bytes"])
    p50 = statistics.median(trials)
    algbw = size / p50 / 1e3
    row = {c: "" for c in column_names(ResultRow)}
    row.update({k: v for k, v in case.items() if k in row})
    row.update(
        run_id=run_id,
        host="synthetic",
        measurement=f"ws{case['world_size']}/i{index}",
        ranks="0-1",
        requested_bytes=size,
        count=size // 4,
        timer="perf_counter",
        iters=5,
        warmup=2,
        trials=len(trials),
        samples=len(trials),
        time_us_p50=p50,
        time_us_mean=statistics.fmean(trials),
        time_us_min=min(trials),
        time_us_max=max(trials),
        time_us_std=statistics.stdev(trials),
        algbw_GBps=algbw,
        busbw_GBps=algbw,
        busbw_factor=1.0,
        wrong=-1,
    )
    return row


def write_night(run_dir: Path, night: int, rows: list[tuple[dict[str, str], list[float]]]) -> None:
    """One run directory: results.csv and a manifest started `night` days after 2026-01-01."""
    import csv

    from distbench.collectors.schema import SCHEMA_VERSION, ResultRow, column_names

    run_dir.mkdir(parents=True)
    day = time.strftime("%Y-%m-%d", time.gmtime(1767225600 + night * 86400))
    with open(run_dir / "results.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, column_names(ResultRow), lineterminator="\n")
        writer.writeheader()
        writer.writerows(result_row(c, t, run_dir.name, i) for i, (c, t) in enumerate(rows))
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_dir.name,
        "status": "completed",
        "started_utc": f"{day}T02:00:00Z",
        "distbench_git_sha": f"{night:07x}{'0' * 33}",
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest))


def night_trials(trials: list[float], rng: random.Random, factor: float) -> list[float]:
    """One night of a case: its real trials resampled (12 draws, with replacement) x factor."""
    return [t * factor for t in rng.choices(trials, k=len(trials))]


def build_history(out: Path, nights: int, rows: int, step_at: int | None, seed: int) -> None:
    """`nights` run directories of `rows` rows each (cases of gate-launches.json, repeated at
    other world sizes when more rows are asked); x1.2 from night `step_at` on."""
    cases, launches = read_launches()
    rng = random.Random(seed)
    names = sorted(launches)
    pool = []
    for copy in range(math.ceil(rows / len(cases))):
        for i, case in enumerate(cases):
            launch = rng.choice([n for n in names if launches[n][i]])
            pool.append(
                (
                    {**case, "world_size": str(int(case["world_size"]) + 4 * copy)},
                    launches[launch][i],
                )
            )
    pool = pool[:rows]
    for night in range(nights):
        factor = 1.2 if step_at is not None and night >= step_at else 1.0
        night_rows = [(case, night_trials(trials, rng, factor)) for case, trials in pool]
        write_night(out / f"nightly-{night:04d}", night, night_rows)


def time_history(out: Path, cache: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `distbench history` over every run under `out`."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "distbench",
            "history",
            "--glob",
            str(out / "nightly-*"),
            "--out",
            str(out / "report"),
            "--cache",
            str(cache),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


def speed(runs: int, rows: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        start = time.perf_counter()
        build_history(out, runs, rows, None, seed=1)
        print(f"built {runs} runs x {rows} rows in {time.perf_counter() - start:.1f} s", flush=True)
        cache = out / "cache.duckdb"
        for what in ("cold (empty cache)", "warm (cached)", "warm again"):
            wall, cpu = time_history(out, cache)
            print(f"history {what}: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)


def detection(histories: int, nights: int, step_at: int) -> None:
    """Found at the step night +-1, by night-to-night spread of the case (log sd)."""
    sys.path.insert(0, str(ROOT))
    from distbench.reports.history_detect import candidates, significant

    cases, launches = read_launches()
    rng = random.Random(7)
    bins: dict[float, list[int]] = {}
    for i, _case in enumerate(cases):
        for name in sorted(launches):
            trials = launches[name][i]
            if not trials:
                continue
            spread = statistics.stdev(
                math.log(statistics.median(night_trials(trials, rng, 1.0))) for _ in range(200)
            )
            band = min(math.floor(spread / 0.05) * 0.05, 0.3)
            counts = bins.setdefault(round(band, 2), [0, 0, 0])
            for _ in range(histories):
                step = [
                    statistics.median(night_trials(trials, rng, 1.2 if k >= step_at else 1.0))
                    for k in range(nights)
                ]
                noise = [statistics.median(night_trials(trials, rng, 1.0)) for _ in range(nights)]
                found = [c.index for c, _ in significant(candidates(step))]
                counts[0] += 1
                counts[1] += any(abs(index - step_at) <= 1 for index in found)
                counts[2] += bool(significant(candidates(noise)))
    print(
        "| night-to-night log sd | histories | step found at +-1 | pure noise with a change point |"
    )
    print("| --- | ---: | ---: | ---: |")
    for band, (count, hits, alarms) in sorted(bins.items()):
        label = f">= {band:.2f}" if band >= 0.3 else f"{band:.2f}-{band + 0.05:.2f}"
        print(f"| {label} | {count} | {hits / count:.0%} | {alarms / count:.0%} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    s = sub.add_parser("speed")
    s.add_argument("--runs", type=int, default=1000)
    s.add_argument("--rows", type=int, default=500)
    d = sub.add_parser("detection")
    d.add_argument("--histories", type=int, default=3)
    d.add_argument("--nights", type=int, default=60)
    d.add_argument("--step-at", type=int, default=40)
    args = parser.parse_args()
    if args.what == "speed":
        speed(args.runs, args.rows)
    else:
        detection(args.histories, args.nights, args.step_at)


if __name__ == "__main__":
    main()
