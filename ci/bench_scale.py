"""The scale benchmark (#27 §3): run directories as 1,024 ranks x 20 sizes x 500 samples would write
them, and a year of nights; the time and peak memory of the readers on them, the bytes on disk,
and the bytes each rank sends at the end of a launch (counted from the writer's encoding).

    python ci/bench_scale.py                      # the table (docs/performance.md)
    python ci/bench_scale.py --nights 60          # a shorter history, for a quick look

Every command runs as its own process (`python -m distbench ...`), timed by the wall clock, its
peak memory the child's maximum resident set (getrusage of that child). Numbers vary with the
box's load: the table in docs/performance.md gives the load it was taken under.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RANKS, SIZES, SAMPLES = 1024, 20, 500
ROWS_PER_NIGHT = 108
HEADER_SOURCE = Path(__file__).resolve().parents[1] / "tests" / "data" / "cluster-a" / "allreduce"


def result_header() -> list[str]:
    from distbench.collectors.schema import ResultRow, column_names

    return column_names(ResultRow)


def write_run(path: Path, run_id: str, rows: int, samples: int, seed: int) -> None:
    """A v4 run directory of `rows` all_reduce rows (sizes 1K x 2^k), `samples` rank -1 samples
    each (throughput mode: one per trial), as a 1,024-rank launch with --rank-samples off writes
    it: results.csv, samples.csv, manifest.json."""
    from distbench.collectors.schema import SCHEMA_VERSION, SampleRow, column_names

    rng = np.random.default_rng(seed)
    path.mkdir(parents=True)
    header = result_header()
    lines = [",".join(header)]
    sample_lines = [",".join(column_names(SampleRow))]
    for i in range(rows):
        size = 1024 << (i % 27)
        times = rng.lognormal(np.log(50 + size / 1e4), 0.05, samples)
        p50 = float(np.median(times))
        cells = dict.fromkeys(header, "")
        cells |= {
            "run_id": run_id, "host": "node0", "measurement": f"ws{RANKS}/i{i}",
            "primitive": "all_reduce", "backend": "nccl", "device": "cuda",
            "world_size": str(RANKS), "nnodes": str(RANKS // 8), "ranks": f"0-{RANKS - 1}",
            "dtype": "float32", "op": "sum", "size_bytes": str(size), "requested_bytes": str(size),
            "count": str(size // 4), "mode": "throughput", "timer": "cuda_event", "iters": "20",
            "warmup": "5", "trials": str(samples), "samples": str(samples),
            "time_us_p50": repr(p50), "time_us_mean": repr(float(times.mean())),
            "time_us_min": repr(float(times.min())), "time_us_max": repr(float(times.max())),
            "time_us_std": repr(float(times.std())), "algbw_GBps": repr(size / p50 / 1e3),
            "busbw_GBps": repr(size / p50 / 1e3 * 2), "busbw_factor": "2.0", "wrong": "-1",
            "trials_run": str(samples), "trial_order": "sequential", "api": "c10d",
            "placement": "out", "graph": "false", "buffers": "regular", "hosts": "node0",
        }  # fmt: skip
        lines.append(",".join(cells[c] for c in header))
        cells_of = (f"ws{RANKS}/i{i},-1,{t},-1,{float(v)!r},,{run_id}" for t, v in enumerate(times))
        sample_lines += list(cells_of)
    (path / "results.csv").write_text("\n".join(lines) + "\n")
    (path / "samples.csv").write_text("\n".join(sample_lines) + "\n")
    manifest = {"schema_version": SCHEMA_VERSION, "run_id": run_id, "status": "completed"}
    manifest |= {"started_utc": f"2026-01-01T00:00:{seed % 60:02d}Z", "command": ["distbench"]}
    (path / "manifest.json").write_text(json.dumps(manifest))


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(seconds, peak resident MB, exit code) of `python -m distbench ARGV`."""
    begin = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "distbench", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - begin
    return took, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def disk_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def bytes_sent_at_end(mode: str, rows: int) -> int:
    """Bytes a rank other than a node's first sends at the end of a launch (bench/ranks.py
    save_rank_samples: off nothing; node a count and 6 float64 per sample row; all nothing)."""
    return 8 + rows * 6 * 8 if mode == "node" else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nights", type=int, default=365, help="nights of history (2 launches)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="distbench-scale-"))
    env = {**os.environ, "DISTBENCH_BASELINES": str(work / "baselines")}
    table: list[tuple[str, str, str, str]] = []
    try:
        a, b = work / "a", work / "b"
        write_run(a, "a", SIZES, SAMPLES, 1)
        write_run(b, "b", SIZES, SAMPLES, 2)
        per_run = disk_bytes(a)
        old_rows = SIZES * SAMPLES * (RANKS + 1)
        old_bytes = per_run - (a / "samples.csv").stat().st_size
        old_bytes += int((a / "samples.csv").stat().st_size / (SIZES * SAMPLES) * old_rows)
        for name, argv in (
            ("compare of two 1,024-rank runs", ["compare", str(a), str(b)]),
            ("report of two 1,024-rank runs", ["report", str(a), str(b), "--out", str(work / "r")]),
            ("baseline save", ["baseline", "save", str(a), "--name", "scale"]),
        ):
            took, peak, code = measure(argv, env)
            table.append((name, f"{took:.1f} s", f"{peak:.0f} MB", f"exit {code}"))
        nights = work / "nights"
        for night in range(args.nights):
            for launch in (1, 2):
                day = f"nightly-2026{1 + night // 28:02d}{1 + night % 28:02d}"
                write_run(nights / day / f"launch-{launch}", day, ROWS_PER_NIGHT, 5, night)
        cache = work / "history.duckdb"
        history = ["history", "--glob", str(nights / "nightly-*"), "--out", str(work / "h")]
        history += ["--cache", str(cache)]
        for label in ("cold", "warm"):
            took, peak, code = measure(history, env)
            name = f"history of {args.nights} nights x 2 launches ({label})"
            table.append((name, f"{took:.1f} s", f"{peak:.0f} MB", f"exit {code}"))
        print(f"# 1,024 ranks x {SIZES} sizes x {SAMPLES} samples (v4, --rank-samples off)")
        print("| what | time | peak memory | |")
        print("| --- | ---: | ---: | --- |")
        for row in table:
            print("| " + " | ".join(row) + " |")
        print(f"\nbytes on disk per run: {per_run:,} (v3, every rank's samples: ~{old_bytes:,})")
        print(f"per night (2 launches): {2 * per_run:,} (v3: ~{2 * old_bytes:,})")
        rows = SIZES * SAMPLES
        print(
            f"bytes each rank sends at the end of a launch: off 0, all 0, node "
            f"{bytes_sent_at_end('node', rows):,} (to its node's first rank only); rank 0 "
            f"receives {rows * 8:,} bytes over the run for the max over ranks (v3: the gather "
            f"of every rank's rows, ~{(RANKS - 1) * rows * 56:,} bytes pickled)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
