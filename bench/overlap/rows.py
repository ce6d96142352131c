"""Rank 0's rows of `distbench overlap`: one results.csv row per case from the per-sample maximum
over ranks of the three phases (each sample the slowest rank's, as every distbench row), and the
overlapped phase's maxima in samples.csv (rank -1)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from distbench.collectors.rows_overlap import OverlapRow
from distbench.collectors.schema import MAX_OVER_RANKS
from distbench.collectors.sink import RunSinks
from distbench.groups import Placement
from distbench.overlap.metrics import overlap_figures
from distbench.overlap.spec import OverlapSpec
from distbench.pairs.rows import sample_rows
from distbench.primitives.facts import emulated_pattern
from distbench.rows import result_columns
from distbench.spec import RunSpec
from distbench.stats import Stats

SERIES = ("compute", "comm", "both", "compute_in_both", "comm_in_both", "comm_completion")
"""What every rank measures per case: the three phases, `both` split in two, and the collective
alone by the clock of its part in `both` (ops.SPANS)."""


@dataclass(frozen=True)
class Case:
    """One case as rank 0 writes it."""

    measurement: str
    collective: str
    requested: int
    size_bytes: int
    count: int
    compute_n: int
    compute_iters: int
    threads: int
    mode: str
    wrong: int
    world_size: int
    worst: dict[str, list[float]]
    """series -> the per-sample maximum over ranks (us): the slowest rank sets each sample."""


def p50(values: Sequence[float]) -> float:
    return Stats(tuple(values)).p50 if values else math.nan


def pattern(case: Case, backend: str) -> str:
    """The collective, the matmul and its threads; and what the backend runs in place of the
    collective where it has no such op (gloo's reduce_scatter: `:via_all_reduce`)."""
    emulated = emulated_pattern(case.collective, backend)
    return f"{case.collective}:matmul={case.compute_n}:threads={case.threads}" + (
        f":{emulated}" if emulated else ""
    )


def overlap_row(spec: RunSpec, placement: Placement, host: str, case: Case) -> OverlapRow:
    """The case's row: time_us_* of the slowest rank's `both` samples, the phases' p50s and
    what they come to (metrics.py)."""
    workload: OverlapSpec = spec.workload
    stats = Stats(tuple(case.worst["both"]), workload.trials)  # the interval over trials
    times = {series: p50(case.worst[series]) for series in SERIES}
    figures = overlap_figures(*(times[s] for s in SERIES))
    world = case.world_size
    return OverlapRow(
        **result_columns(
            spec,
            host=host,
            measurement=case.measurement,
            primitive="overlap",
            ranks=tuple(range(world)),
            nnodes=placement.nnodes,
            hosts=placement.hosts,
            mode=case.mode,
            stats=stats,  # no bandwidth: the collective alone's time is t_comm_us
        ),
        dtype="float32",
        op="" if case.collective in ("all_gather", "broadcast") else "sum",
        size_bytes=case.size_bytes,
        requested_bytes=case.requested,
        count=case.count,
        root="0" if case.collective == "broadcast" else "",
        src="",
        dst="",
        pattern=pattern(case, spec.launch.backend),
        wrong=case.wrong,
        collective=case.collective,
        compute_n=case.compute_n,
        compute_iters=case.compute_iters,
        compute_threads=case.threads,
        t_compute_us=times["compute"],
        t_comm_us=times["comm"],
        t_both_us=times["both"],
        t_compute_in_both_us=times["compute_in_both"],
        t_comm_in_both_us=times["comm_in_both"],
        t_comm_completion_us=times["comm_completion"],
        overlap_efficiency=figures.overlap_efficiency,
        compute_slowdown=figures.compute_slowdown,
        comm_slowdown=figures.comm_slowdown,
        osu_overlap_pct=figures.osu_overlap_pct,
    )


def write_case(
    sinks: RunSinks, spec: RunSpec, placement: Placement, host: str, case: Case
) -> OverlapRow:
    """The `both` samples of the maximum over ranks (rank -1) first (the row commits the
    measurement, as --resume expects), then the row."""
    iters = spec.workload.iters
    samples = sample_rows(case.measurement, MAX_OVER_RANKS, case.mode, iters, case.worst["both"])
    row = overlap_row(spec, placement, host, case)
    sinks.write(samples, row)
    return row
