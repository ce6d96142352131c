"""How long `distbench report` takes on 10,000 rows: the figure in README's performance section.

    python -m tests.bench_report             # writes two synthetic runs to a temp dir, times it
    python -m tests.bench_report --rows 20000

Two labels x 5 primitives x 4 world sizes x 2 modes x 25 sizes x 5 dtypes = 10,000 results rows,
each with 5 max-over-ranks samples (50,000 samples.csv rows), times from t = alpha + size / beta.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path

import pandas as pd

from distbench.collectors.schema import (
    MANIFEST_JSON,
    RESULTS_CSV,
    SAMPLES_CSV,
    SCHEMA_VERSION,
    ResultRow,
    column_names,
)

PRIMITIVES = {"all_reduce": "2(n-1)/n", "all_gather": "(n-1)/n", "broadcast": "1", "reduce": "1"}
PRIMITIVES |= {"all_to_all": "(n-1)/n"}
DTYPES = ("float32", "bfloat16", "float16", "int32", "float64")
WORLD_SIZES = (2, 4, 8, 16)
MODES = ("throughput", "latency")
SAMPLES = 5


def busbw_factor(primitive: str, n: int) -> float:
    return {"2(n-1)/n": 2 * (n - 1) / n, "(n-1)/n": (n - 1) / n, "1": 1.0}[PRIMITIVES[primitive]]


def write_run(run_dir: Path, label: str, sizes: int, speed: float, seed: int) -> int:
    """One synthetic run directory; returns its row count."""
    rng = random.Random(seed)
    run_dir.mkdir(parents=True)
    rows, samples = [], []
    index = 0
    for primitive in PRIMITIVES:
        for n in WORLD_SIZES:
            for mode in MODES:
                for dtype in DTYPES:
                    for k in range(sizes):
                        size = 1024 * 2**k // 4 * 4 if k < 21 else 1024 * 2**21 + k
                        mean = 20.0 * n / speed + size / (5e3 * speed)
                        times = sorted(mean * rng.lognormvariate(0, 0.1) for _ in range(SAMPLES))
                        measurement = f"ws{n}/i{index}"
                        index += 1
                        p50 = times[SAMPLES // 2]
                        factor = busbw_factor(primitive, n)
                        rows.append(
                            {
                                **dict.fromkeys(column_names(ResultRow), ""),
                                "run_id": run_dir.name,
                                "label": label,
                                "host": f"host-{label}",
                                "measurement": measurement,
                                "primitive": primitive,
                                "backend": "nccl",
                                "device": "cuda",
                                "world_size": n,
                                "nnodes": 1,
                                "ranks": f"0-{n - 1}",
                                "dtype": dtype,
                                "size_bytes": size,
                                "requested_bytes": size,
                                "count": size // 4,
                                "mode": mode,
                                "timer": "cuda_event",
                                "iters": 20,
                                "warmup": 5,
                                "trials": SAMPLES,
                                "samples": SAMPLES,
                                "time_us_p50": p50,
                                "time_us_mean": sum(times) / SAMPLES,
                                "time_us_min": times[0],
                                "time_us_max": times[-1],
                                "time_us_p95": times[-1],
                                "time_us_p99": times[-1],
                                "time_us_std": 0.0,
                                "algbw_GBps": size / p50 / 1e3,
                                "busbw_GBps": size / p50 / 1e3 * factor,
                                "busbw_factor": factor,
                                "wrong": -1,
                            }
                        )
                        samples += [(measurement, -1, t, -1, v, "") for t, v in enumerate(times)]
    pd.DataFrame(rows).to_csv(run_dir / RESULTS_CSV, index=False)
    pd.DataFrame(
        samples, columns=["measurement", "rank", "trial", "iter", "time_us", "loss"]
    ).to_csv(run_dir / SAMPLES_CSV, index=False)
    manifest = {"schema_version": SCHEMA_VERSION, "run_id": run_dir.name, "status": "completed"}
    (run_dir / MANIFEST_JSON).write_text(json.dumps(manifest) + "\n")
    return len(rows)


def write_big_runs(base: Path, rows: int = 10_000) -> list[Path]:
    """Two labels ('a100', 'h100') of rows/2 results rows each."""
    per_size = len(PRIMITIVES) * len(WORLD_SIZES) * len(MODES) * len(DTYPES)
    sizes = max(2, rows // 2 // per_size)
    paths = []
    for i, (label, speed) in enumerate((("a100", 1.0), ("h100", 1.8))):
        path = base / label
        write_run(path, label, sizes, speed, seed=i)
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000)
    args = parser.parse_args()
    from distbench.reports.report.page.build import build_report

    with tempfile.TemporaryDirectory() as tmp:
        paths = write_big_runs(Path(tmp), args.rows)
        start, cpu, before = time.perf_counter(), time.process_time(), os.times()
        files = build_report([str(p) for p in paths], str(Path(tmp) / "report"))
        seconds, cpu, after = time.perf_counter() - start, time.process_time() - cpu, os.times()
        size_mb = files.html.stat().st_size / 1e6
    children = after.children_user + after.children_system
    children -= before.children_user + before.children_system
    print(
        f"{files.rows} rows: report in {seconds:.1f} s wall, {cpu:.1f} s CPU in its process "
        f"and {children:.1f} s in the children that drew its figures "
        f"(report.html {size_mb:.1f} MB, {len(files.figures)} figures)"
    )


if __name__ == "__main__":
    main()
