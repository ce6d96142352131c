"""Rank side of `distbench pairs`: every pair of units (ranks, or nodes) in the rounds of the
circle method (pairs/spec.py), each round's disjoint pairs at the same time.

    torchrun --nproc-per-node 4 -m distbench.worker RUN/spec.json    # the CLI starts it

Per (mode, size, round): every rank warms up its own pair's op, then every trial starts after a
world barrier (TRIALS[mode], the comm loops' timers); idle ranks time nothing. As the round
ends, each pair's per-sample maximum over its ranks reaches every rank in one tensor all_reduce
(ranks.max_by_slot: a slot per pair); rank 0 writes one results.csv row per pair and those
samples (rank -1), and ranks.csv (pairs/outliers.py) as each size ends. Each rank keeps its own
samples for --rank-samples, written at the end of the launch.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from distbench.collectors.ranks import RankRow
from distbench.collectors.schema import RANKS_CSV, RESULTS_CSV, ResultRow, SampleRow
from distbench.collectors.sink import CsvSink, RunSinks, read_rows, run_sinks
from distbench.pairs.outliers import PairValue, log_variance
from distbench.pairs.rows import (
    PairResult,
    kept_result,
    pair_row,
    rank_rows,
    sample_rows,
    window_of,
    write_pair,
)
from distbench.pairs.spec import PairsSpec, circle_rounds
from distbench.primitives.base import Context, element_count
from distbench.primitives.send_recv import wait_all
from distbench.ranks import max_by_slot, save_rank_samples
from distbench.spec import RunSpec, measurement_id
from distbench.timing import TRIALS, warm_up


@dataclass(frozen=True)
class Layout:
    """The units being paired and where every rank ran."""

    units: list[list[int]]
    """unit -> its global ranks (one each at rank level; a node's ranks at node level)."""
    nodes: list[int]
    """global rank -> torchrun node (GROUP_RANK)."""
    hosts: list[str]
    """global rank -> host."""


def gather_layout(level: str, world_size: int) -> Layout:
    mine = (int(os.environ.get("GROUP_RANK", "0")), socket.gethostname())
    found: list[Any] = [None] * world_size
    dist.all_gather_object(found, mine)
    nodes, hosts = [n for n, _ in found], [h for _, h in found]
    if level == "rank":
        return Layout([[r] for r in range(world_size)], nodes, hosts)
    units = [[r for r in range(world_size) if nodes[r] == k] for k in sorted(set(nodes))]
    if len({len(u) for u in units}) > 1:
        raise RuntimeError(f"--level node needs as many ranks on every node, got {units}")
    return Layout(units, nodes, hosts)


def build_op(
    spec: PairsSpec, pair: list[int], group: Any, rank: int, buffers: tuple[torch.Tensor, ...]
) -> tuple[Callable[[], None], int]:
    """This rank's op in its pair (both units' ranks in `pair`, first unit first) and the
    messages one op completes (what a sample is divided by)."""
    send, recv = buffers
    if spec.primitive == "all_reduce":
        return lambda: dist.all_reduce(send, group=group), 1
    half = len(pair) // 2
    index = pair.index(rank)
    peer = pair[(index + half) % len(pair)]  # a rank of one node <-> the same local rank
    window = window_of(spec, send.numel() * send.element_size())

    def exchange() -> None:
        # Grouped, receives first: on NCCL ungrouped receives before the sends would deadlock.
        ops = [dist.P2POp(dist.irecv, recv, peer) for _ in range(window)]
        ops += [dist.P2POp(dist.isend, send, peer) for _ in range(window)]
        wait_all(dist.batch_isend_irecv(ops))

    return exchange, 2 * window * half


def pair_groups(spec: PairsSpec, layout: Layout) -> dict[tuple[int, int], Any]:
    """all_reduce: one subgroup per pair, made by every rank in the same order (new_group is
    collective); send/recv needs none."""
    if spec.primitive != "all_reduce":
        return {}
    n = len(layout.units)
    return {
        (a, b): dist.new_group(ranks=layout.units[a] + layout.units[b])
        for a in range(n)
        for b in range(a + 1, n)
    }


@dataclass
class PairsRun:
    """One launch's pairs: what every size's rounds need, and the next measurement index."""

    spec: RunSpec
    ctx: Context
    layout: Layout
    groups: dict[tuple[int, int], Any]
    sinks: RunSinks | None
    ranks_csv: CsvSink | None
    """Rank 0's ranks.csv, beside its results.csv and samples.csv (`sinks`)."""
    kept: dict[str, dict[str, str]]
    """results.csv rows of an interrupted run (--resume), by measurement id; rank 0 only."""
    index: int = 0
    ids: list[str] = field(default_factory=list)
    """Every measurement id of the launch so far, in order (the same on every rank)."""
    local: list[SampleRow] = field(default_factory=list)
    """This rank's own samples (--rank-samples), written at the end of the launch."""

    def measure_size(self, mode: str, requested: int, log: Callable[[str], None]) -> None:
        """Every round at one size; rank 0 writes each round's rows, then the size's ranks.csv."""
        workload: PairsSpec = self.spec.workload
        ctx, tag = self.ctx, workload.tag
        dtype = getattr(torch, workload.dtype)
        count = element_count(requested, dtype)
        buffers = tuple(torch.ones(count, dtype=dtype, device=ctx.device) for _ in "sr")
        rounds = circle_rounds(len(self.layout.units))
        results: list[PairValue] = []
        for number, pairs in enumerate(rounds, 1):
            ids = [measurement_id(ctx.world_size, self.index + j, tag) for j in range(len(pairs))]
            self.index += len(pairs)
            self.ids += ids
            if set(ids) <= set(self.spec.launch.done):
                results += [kept_result(self.kept, m, p) for m, p in zip(ids, pairs, strict=True)]
                continue
            size = count * dtype.itemsize
            log(f"begin {ids[0]} pairs round {number}/{len(rounds)} {mode} size={size}")
            mine = run_round(ctx, workload, self.layout, self.groups, pairs, mode, buffers)
            slot = pair_slot(self.layout, pairs, ctx.global_ranks[ctx.rank])
            if slot >= 0:
                rank = ctx.global_ranks[ctx.rank]
                self.local += sample_rows(ids[slot], rank, mode, workload.iters, mine)
            worst = max_by_slot(ctx, mine, slot, len(pairs))
            if self.sinks is None:
                continue
            for measurement, pair, values in zip(ids, pairs, worst, strict=True):
                result = PairResult(measurement, pair, mode, requested, values)
                row = pair_row(self.spec, self.layout, result, dtype, count)
                write_pair(self.sinks, row, result)
                spread = log_variance(result.worst, workload.trials)  # the standings' noise
                results.append((pair[0], pair[1], row.busbw_GBps, spread))
        if self.ranks_csv is not None:
            size = count * dtype.itemsize
            self.ranks_csv.write(rank_rows(self.spec, self.layout, results, mode, size))


def run_pairs(spec: RunSpec, ctx: Context, log: Callable[[str], None]) -> None:
    """Measure every pair, round by round; rank 0 writes rows as each round finishes."""
    workload: PairsSpec = spec.workload
    run_dir = Path(spec.launch.run_dir)
    layout = gather_layout(workload.level, ctx.world_size)
    writer = ctx.rank == 0
    kept: dict[str, dict[str, str]] = {}
    if writer:
        kept = {row["measurement"]: row for row in read_rows(run_dir / RESULTS_CSV)}
    with (
        run_sinks(run_dir, ResultRow, spec.launch.run_id, writer) as sinks,
        CsvSink(run_dir / RANKS_CSV, RankRow) if writer else nullcontext() as ranks_csv,
    ):
        run = PairsRun(spec, ctx, layout, pair_groups(workload, layout), sinks, ranks_csv, kept)
        for mode in workload.modes:
            for requested in workload.sizes:
                run.measure_size(mode, requested, log)
        save_rank_samples(ctx, run.local, spec.launch, run.ids)  # --rank-samples


def pair_slot(layout: Layout, pairs: list[tuple[int, int]], rank: int) -> int:
    """The index in `pairs` of the pair this global rank measures in the round; -1: a bye."""
    for slot, (a, b) in enumerate(pairs):
        if rank in layout.units[a] + layout.units[b]:
            return slot
    return -1


def run_round(
    ctx: Context,
    workload: PairsSpec,
    layout: Layout,
    groups: dict[tuple[int, int], Any],
    pairs: list[tuple[int, int]],
    mode: str,
    buffers: tuple[torch.Tensor, ...],
) -> list[float]:
    """This rank's samples (us per message) in one round: its pair's op timed in every trial;
    empty when its unit idles this round (odd unit counts)."""
    rank = ctx.global_ranks[ctx.rank]
    run, ops = idle, 0
    slot = pair_slot(layout, pairs, rank)
    if slot >= 0:
        a, b = pairs[slot]
        run, ops = build_op(
            workload, layout.units[a] + layout.units[b], groups.get((a, b)), rank, buffers
        )
    warm_up(ctx, run, workload.warmup)  # an idle rank joins the barriers only
    samples = [s for _ in range(workload.trials) for s in TRIALS[mode](ctx, run, workload.iters)]
    return [s / ops for s in samples] if ops else []


def idle() -> None:
    """The op of a rank whose unit has a bye this round."""
