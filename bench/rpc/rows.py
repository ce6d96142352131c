"""Rank 0's rows of `distbench rpc`: one ResultRow per pattern and size (primitive `rpc`), each
sample the slowest calling rank's, and its samples (every rank's and the maximum, rank -1)."""

from __future__ import annotations

from typing import Any

import torch

from distbench.collectors.schema import MAX_OVER_RANKS, ResultRow, SampleRow
from distbench.collectors.sink import RunSinks
from distbench.groups import Placement
from distbench.ranks import ranks_label
from distbench.rpc.spec import RpcSpec, pattern_label
from distbench.spec import RunSpec
from distbench.stats import Stats, algbw_gbps, row_figures
from distbench.timing import timer_name

LATENCY_PATTERNS = ("sync", "rref")
"""Patterns whose samples are single calls (mode latency); async and ps: trial means."""


def rpc_row(
    spec: RunSpec, place: Placement, host: str, measurement: str, pattern: str, count: int,
    worst: list[float], callers: list[int],
) -> ResultRow:  # fmt: skip
    """The row: time per call (async: per call of a window, so 1e6 / p50 is calls/s; ps: per
    step), algbw = the call's tensor bytes / that time (one direction, as send/recv's)."""
    workload: RpcSpec = spec.workload
    stats = Stats(tuple(worst))
    size = count * 4
    mode = "latency" if pattern in LATENCY_PATTERNS else "throughput"
    algbw = algbw_gbps(size, stats.p50)
    return ResultRow(
        **spec.run_columns,
        host=host,
        measurement=measurement,
        primitive="rpc",
        device="cpu",
        world_size=len(callers) + (pattern == "ps"),
        nnodes=place.nnodes,
        ranks=ranks_label(tuple(range(len(callers) + (pattern == "ps")))),
        dtype="float32",
        op="",
        size_bytes=size,
        requested_bytes=size,
        count=count,
        root="0" if pattern == "ps" else "",
        src="",
        dst="",
        pattern=pattern_label(workload, pattern),
        mode=mode,
        timer=timer_name(torch.device("cpu"), mode),
        iters=workload.iters,
        warmup=workload.warmup,
        trials=workload.trials,
        **row_figures(stats, mode == "latency", algbw, 1.0),
        wrong=-1,
        hosts=place.hosts,
        trials_run=workload.trials,
    )


def write_measurement(
    sinks: RunSinks, row_of: Any, measurement: str, gathered: list[list[float]], per_trial: int
) -> None:
    """Samples first (the row commits the measurement, as --resume expects), then the row;
    `row_of(worst, callers)` builds it."""
    callers = [rank for rank, values in enumerate(gathered) if values]
    worst = [max(v) for v in zip(*(gathered[r] for r in callers), strict=True)]
    samples = [
        SampleRow(measurement, rank, i // per_trial, i % per_trial if per_trial > 1 else -1, v)
        for rank, values in [*((r, gathered[r]) for r in callers), (MAX_OVER_RANKS, worst)]
        for i, v in enumerate(values)
    ]
    sinks.write(samples, row_of(worst, callers))
