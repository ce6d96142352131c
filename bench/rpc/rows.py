"""Rank 0's rows of `distbench rpc`: one ResultRow per pattern and size (primitive `rpc`), each
sample the slowest calling rank's, and its samples (the maximum over the callers, rank -1); every
rank's own samples as rows for --rank-samples."""

from __future__ import annotations

from distbench.collectors.schema import MAX_OVER_RANKS, ResultRow, SampleRow
from distbench.collectors.sink import RunSinks
from distbench.groups import Placement
from distbench.rows import result_columns
from distbench.rpc.spec import RpcSpec, pattern_label
from distbench.spec import RunSpec
from distbench.stats import Stats, algbw_gbps

LATENCY_PATTERNS = ("sync", "rref")
"""Patterns whose samples are single calls (mode latency); async and ps: trial means."""


def rpc_row(
    spec: RunSpec, place: Placement, host: str, measurement: str, pattern: str, count: int,
    worst: list[float], callers: int,
) -> ResultRow:  # fmt: skip
    """The row: time per call (async: per call of a window, so 1e6 / p50 is calls/s; ps: per
    step), algbw = the call's tensor bytes / that time (one direction, as send/recv's).
    `callers`: the ranks that called (ps: all but the server)."""
    workload: RpcSpec = spec.workload
    stats = Stats(tuple(worst), workload.trials)  # the p50's interval over trials
    size = count * 4
    mode = "latency" if pattern in LATENCY_PATTERNS else "throughput"
    algbw = algbw_gbps(size, stats.p50)
    ranks = tuple(range(callers + (pattern == "ps")))
    return ResultRow(
        **result_columns(
            spec,
            host=host,
            measurement=measurement,
            primitive="rpc",
            ranks=ranks,
            nnodes=place.nnodes,
            hosts=place.hosts,
            mode=mode,
            stats=stats,
            algbw=algbw,
            factor=1.0,
            device="cpu",
        ),
        dtype="float32",
        op="",
        size_bytes=size,
        requested_bytes=size,
        count=count,
        root="0" if pattern == "ps" else "",
        src="",
        dst="",
        pattern=pattern_label(workload, pattern),
        wrong=-1,
    )


def sample_rows(
    measurement: str, rank: int, values: list[float], per_trial: int
) -> list[SampleRow]:
    """One rank's samples (or the maximum's, rank -1), trial-major: `per_trial` calls per trial
    (latency patterns: iter is the call) or one (iter -1)."""
    return [
        SampleRow(measurement, rank, i // per_trial, i % per_trial if per_trial > 1 else -1, v)
        for i, v in enumerate(values)
    ]


def write_measurement(sinks: RunSinks, row: ResultRow, worst: list[float], per_trial: int) -> None:
    """The maximum's samples first (the row commits the measurement, as --resume expects), then
    the row."""
    sinks.write(sample_rows(row.measurement, MAX_OVER_RANKS, worst, per_trial), row)
