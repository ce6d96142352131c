"""The speed of `distbench history` (docs/performance.md), and the synthetic nightly runs its
tests read.

    python ci/bench_history.py speed --runs 1000 --rows 500              # cold and cached
    python ci/bench_history.py speed --runs 365 --rows 108 --launches 2  # a year of nights
    python ci/bench_history.py judge --runs 1000 --rows 500              # the change points alone

Synthetic nights are real run directories (results.csv of the current schema, manifest.json with
start time and git revision) whose rows' statistics come from trials drawn from real launches of
this machine (tests/data/gate-launches.json): each night resamples one launch's trials. What
history finds and misses is measured by ci/bench_stats_history.py, on simulated series.
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


def write_night(
    run_dir: Path, night: int, rows: list[tuple[dict[str, str], list[float]]], launch: int = 0
) -> None:
    """One run directory: results.csv and a manifest started `night` days after 2026-01-01
    (`launch` minutes later for the night's launch-N)."""
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
        "started_utc": f"{day}T02:{launch:02d}:00Z",
        "distbench_git_sha": f"{night:07x}{'0' * 33}",
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest))


def night_trials(trials: list[float], rng: random.Random, factor: float) -> list[float]:
    """One night of a case: its real trials resampled (12 draws, with replacement) x factor."""
    return [t * factor for t in rng.choices(trials, k=len(trials))]


def build_history(
    out: Path, nights: int, rows: int, step_at: int | None, seed: int, launches: int = 1,
    stepped: frozenset[str] | None = None,
) -> None:  # fmt: skip
    """`nights` run directories of `rows` rows each (cases of gate-launches.json, repeated at
    other world sizes when more rows are asked); x1.2 from night `step_at` on, for the rows of
    the primitives `stepped` (None: every row, the whole run). With `launches` above 1 each
    night holds launch-1 ... launch-N, as ci/nightly.sh --launches N writes."""
    cases, recorded = read_launches()
    rng = random.Random(seed)
    names = sorted(recorded)
    pool = []
    for copy in range(math.ceil(rows / len(cases))):
        for i, case in enumerate(cases):
            launch = rng.choice([n for n in names if recorded[n][i]])
            pool.append(
                (
                    {**case, "world_size": str(int(case["world_size"]) + 4 * copy)},
                    recorded[launch][i],
                )
            )
    pool = pool[:rows]
    for night in range(nights):
        late = step_at is not None and night >= step_at
        factors = [
            1.2 if late and (stepped is None or case["primitive"] in stepped) else 1.0
            for case, _trials in pool
        ]
        folder = out / f"nightly-{night:04d}"
        for launch in range(launches):
            night_rows = [
                (case, night_trials(trials, rng, factor))
                for (case, trials), factor in zip(pool, factors, strict=True)
            ]
            target = folder / f"launch-{launch + 1}" if launches > 1 else folder
            write_night(target, night, night_rows, launch)
        if launches > 1:
            (folder / "manifest.json").write_text(
                (folder / "launch-1" / "manifest.json").read_text()
            )


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


def speed(runs: int, rows: int, launches: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        start = time.perf_counter()
        build_history(out, runs, rows, None, seed=1, launches=launches)
        print(
            f"built {runs} runs x {rows} rows x {launches} launch(es) in "
            f"{time.perf_counter() - start:.1f} s",
            flush=True,
        )
        cache = out / "cache.duckdb"
        for what in ("cold (empty cache)", "warm (cached)", "warm again"):
            wall, cpu = time_history(out, cache)
            print(f"history {what}: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)


def judge_speed(runs: int, rows: int) -> None:
    """CPU seconds of history's change points alone (reports/history/detect.py judge_history),
    and of its verdicts' claims of what they would catch (3 and 7 nights after a step, and a
    primitive's rows at once: simulated, distbench.stats.changepoint_reach), relative and
    absolute, on `rows` series of `runs` nights of 7 primitives (noise of sd 0.05
    and a box of 0.03), the null pool warm; then with one primitive's series 20 % slower from
    night 0.6 x runs, where relative mode looks twice."""
    import numpy as np

    from distbench.reports.history.detect import Series, judge_history
    from distbench.stats.changepoint_reach import detectable_step, together_step

    rng = np.random.default_rng(0)
    primitives = [f"p{i % 7}" for i in range(rows)]
    logs = 0.05 * rng.standard_normal((rows, runs)) + 0.03 * rng.standard_normal((1, runs))
    nights = np.arange(runs)

    def series() -> list[Series]:
        return [
            Series(f"row {i}", "comm", "time_us_min", 0, nights, np.exp(y), 0.0, p)
            for i, (y, p) in enumerate(zip(logs, primitives, strict=True))
        ]

    judge_history(series(), runs, False)  # simulates the null pool once
    for label in ("no change", "one primitive 20 % slower"):
        if label != "no change":
            logs[[p == "p0" for p in primitives], int(0.6 * runs) :] += math.log(1.2)
        for relative in (False, True, False, True):
            start = time.process_time()
            _judged_series, judged = judge_history(series(), runs, relative)
            mode = "relative" if relative else "absolute"
            print(f"{label}, {mode}: {time.process_time() - start:.2f} s CPU", flush=True)
            start = time.process_time()
            for one in judged:  # what each verdict says it would catch (simulated claims)
                for after in (3, 7):
                    detectable_step(one, after, 0.05)
                together_step(one, 3, 0.05)
            print(f"  ... its 'would catch' claims: {time.process_time() - start:.2f} s CPU",
                  flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    for name in ("speed", "judge"):
        s = sub.add_parser(name)
        s.add_argument("--runs", type=int, default=1000)
        s.add_argument("--rows", type=int, default=500)
        s.add_argument("--launches", type=int, default=1)
    args = parser.parse_args()
    if args.what == "judge":
        judge_speed(args.runs, args.rows)
    else:
        speed(args.runs, args.rows, args.launches)


if __name__ == "__main__":
    main()
