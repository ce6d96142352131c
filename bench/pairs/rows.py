"""Rank 0's rows of `distbench pairs`: one results.csv row per pair (the per-sample maximum over
the pair's ranks, as every distbench row), those samples (rank -1), and ranks.csv's standings."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from distbench.collectors.ranks import RankRow
from distbench.collectors.schema import MAX_OVER_RANKS, ResultRow, SampleRow
from distbench.collectors.sink import RunSinks
from distbench.pairs.outliers import PairValue, Standing
from distbench.pairs.spec import PairsSpec
from distbench.parse import ranks_label
from distbench.primitives.send_recv import default_window
from distbench.rows import result_columns
from distbench.spec import RunSpec
from distbench.stats import Stats, algbw_gbps


@dataclass(frozen=True)
class PairResult:
    """One pair's round: the per-sample maximum over the pair's ranks (us per message)."""

    measurement: str
    pair: tuple[int, int]
    mode: str
    requested: int
    worst: list[float]
    """The slowest of the pair's ranks sets each sample (bench/ranks.py max_by_slot)."""


def window_of(workload: PairsSpec, size_bytes: int) -> int:
    """send/recv messages in flight each way: --window, else sendrecv's default for the size
    (64 up to 1 MiB, then 64 MiB / size)."""
    return workload.window or default_window(size_bytes)


def pattern_of(workload: PairsSpec) -> str:
    """`pairs` (all_reduce), `pairs:bidir-window` (send/recv, the default window) or
    `pairs:bidir-window=W` (--window W); `node-pairs...` at node level. The pattern names the
    setting, the same at every size, as sendrecv's (primitives/send_recv.py): the default window
    shrinks with the size, and naming its count split one case's line over sizes in report and
    compare. The messages in flight are the row's window_msgs."""
    prefix = "pairs" if workload.level == "rank" else "node-pairs"
    if workload.primitive == "all_reduce":
        return prefix
    return f"{prefix}:bidir-window" + (f"={workload.window}" if workload.window else "")


def pair_ranks(units: Sequence[Sequence[int]], pair: tuple[int, int]) -> list[int]:
    return [*units[pair[0]], *units[pair[1]]]


def pair_row(
    spec: RunSpec, layout: Any, result: PairResult, dtype: torch.dtype, count: int
) -> ResultRow:
    """The pair's row. size_bytes is one message (send_recv) or each rank's buffer (all_reduce);
    a send_recv sample is the exchange's time / the messages it moves (both directions, every
    rank of a node pair), so algbw is the pair's aggregate, as osu_bibw's."""
    workload: PairsSpec = spec.workload
    ranks = pair_ranks(layout.units, result.pair)
    stats = Stats(tuple(result.worst), workload.trials)
    size = count * dtype.itemsize
    group = len(ranks)
    factor = 2 * (group - 1) / group if workload.primitive == "all_reduce" else 1.0
    algbw = algbw_gbps(size, stats.p50)
    sends = workload.primitive == "send_recv"
    window = float(window_of(workload, size)) if sends else math.nan  # all_reduce: empty
    nodes = sorted({layout.nodes[r] for r in ranks})
    host_of = {layout.nodes[r]: layout.hosts[r] for r in ranks}
    return ResultRow(
        **result_columns(
            spec,
            host=layout.hosts[0],
            measurement=result.measurement,
            primitive=workload.primitive,
            ranks=tuple(ranks),
            nnodes=len(nodes),
            hosts="+".join(host_of[n] for n in nodes),
            mode=result.mode,
            stats=stats,
            algbw=algbw,
            factor=factor,
            world_size=len(layout.nodes),
        ),
        dtype=workload.dtype,
        op="sum" if workload.primitive == "all_reduce" else "",
        size_bytes=size,
        requested_bytes=result.requested,
        count=count,
        root="",
        src=str(result.pair[0]),
        dst=str(result.pair[1]),
        pattern=pattern_of(workload),
        wrong=-1,
        window_msgs=window,
    )


def sample_rows(
    measurement: str, rank: int, mode: str, iters: int, samples: Sequence[float]
) -> list[SampleRow]:
    """One rank's (or the maximum's, rank -1) samples, trial-major: one per trial (throughput)
    or `iters` per trial (latency)."""
    per_trial = iters if mode == "latency" else 1
    rows = []
    for index, value in enumerate(samples):
        trial, it = divmod(index, per_trial)
        rows.append(SampleRow(measurement, rank, trial, it if mode == "latency" else -1, value))
    return rows


def write_pair(sinks: RunSinks, row: ResultRow, result: PairResult) -> None:
    """The maximum's samples first (the row commits the measurement, as --resume expects), then
    the row."""
    sinks.write(
        sample_rows(row.measurement, MAX_OVER_RANKS, row.mode, row.iters, result.worst), row
    )


def rank_rows(
    spec: RunSpec, layout: Any, found: Sequence[Standing], mode: str, size: int
) -> list[RankRow]:
    """ranks.csv's rows of one (mode, size): every unit's standing among all (outliers.py
    `standings`, then `confirm` where a unit was flagged)."""
    workload: PairsSpec = spec.workload
    rows = []
    for standing in found:
        ranks = layout.units[standing.unit]
        rows.append(
            RankRow(
                run_id=spec.launch.run_id,
                label=spec.launch.label,
                level=workload.level,
                rank=ranks_label(tuple(ranks)),
                host=layout.hosts[ranks[0]],
                node=layout.nodes[ranks[0]],
                primitive=workload.primitive,
                mode=mode,
                size_bytes=size,
                env=spec.env_label,
                pairs=standing.pairs,
                busbw_GBps=standing.busbw_GBps,
                robust_z=standing.robust_z,
                outlier=str(standing.outlier).lower(),
                first_z=standing.first_z,
            )
        )
    return rows


def kept_result(
    kept: dict[str, dict[str, str]], measurement: str, pair: tuple[int, int]
) -> PairValue:
    """A pair measured before an interruption: its busbw from results.csv (--resume); the noise
    of its trials is not kept there (NaN: the standings' floor stands in)."""
    value = kept.get(measurement, {}).get("busbw_GBps", "")
    return pair[0], pair[1], float(value) if value else math.nan, math.nan
