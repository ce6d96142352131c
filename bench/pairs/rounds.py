"""One round of `distbench pairs` on every rank: the units being paired and where each rank ran
(Layout), each pair's op (send/recv window or all_reduce on its subgroup), and the round's
pairs timed at once (run_round): every trial starts after a world barrier (TRIALS[mode], the comm
loops' timers); a rank whose unit has a bye joins the barriers only. The runner (pairs/runner.py)
runs the rounds of each size and of a confirmation with it."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist

from distbench.pairs.rows import window_of
from distbench.pairs.spec import PairsSpec
from distbench.primitives.base import Context
from distbench.primitives.send_recv import wait_all
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


@dataclass(frozen=True)
class Case:
    """One (mode, size) of the launch: what its rounds time and its rows say."""

    mode: str
    requested: int
    dtype: torch.dtype
    count: int
    buffers: tuple[torch.Tensor, ...]

    @property
    def size(self) -> int:
        return self.count * self.dtype.itemsize


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
