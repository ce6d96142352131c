"""What the runners compute over the ranks of a group, outside every timed region: the per-sample
maximum (what a training step waits for; per slot where ranks measure different things), sums,
every rank's raw samples kept as --rank-samples says (collectors/rank_samples.py: per node or per
rank, never through rank 0), and the `ranks` column that names the group.

Reductions of numbers run on the group's backend: on the GPU under nccl (NCCL moves GPU memory
only), on the CPU under gloo, as tensors: rank 0 receives one value per sample of the maximum,
never every rank's samples (torch's object collectives pickle, and do not scale).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from distbench.collectors.rank_samples import (
    RANK_SAMPLES_DIR,
    file_stem,
    free_path,
    samples_table,
    write_samples,
)
from distbench.collectors.schema import SampleRow
from distbench.primitives.base import Context
from distbench.spec import LaunchSpec


def reduce_device(ctx: Context) -> torch.device:
    """Where a reduction's tensor lives: the rank's GPU under nccl, else the host."""
    return ctx.device if ctx.backend == "nccl" else torch.device("cpu")


def max_over_ranks(ctx: Context, samples: list[float]) -> list[float]:
    """Per-sample maximum over the ranks of the group: what a training step waits for.
    Every rank passes the same number of samples."""
    tensor = torch.tensor(samples, dtype=torch.float64, device=reduce_device(ctx))  # [samples]
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX, group=ctx.group)
    return [float(x) for x in tensor.cpu().tolist()]


def sum_over_ranks(ctx: Context, value: int) -> int:
    """The sum of one integer over the ranks of the group (--check's wrong elements)."""
    tensor = torch.tensor([value], dtype=torch.int64, device=reduce_device(ctx))
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM, group=ctx.group)
    return int(tensor.item())


def max_by_slot(ctx: Context, samples: list[float], slot: int, slots: int) -> list[list[float]]:
    """Per-sample maximum over the ranks of each of `slots` slots (a pair of `distbench pairs`,
    the callers of `distbench rpc`): each rank passes its samples and its slot, or -1 with no
    samples (a rank with a bye, rpc's parameter server). Every rank of a slot has as many
    samples. Two tensor collectives (the length, then the [slots, length] maxima), on every
    rank the same result: slot -> its maxima. Nothing is pickled."""
    device = reduce_device(ctx)
    length = torch.tensor([len(samples)], dtype=torch.int64, device=device)
    dist.all_reduce(length, op=dist.ReduceOp.MAX, group=ctx.group)
    count = int(length.item())
    if slot >= 0 and len(samples) != count:
        raise RuntimeError(f"rank {ctx.rank} has {len(samples)} samples, another {count}")
    table = torch.full((slots, count), -math.inf, dtype=torch.float64)  # [slots, samples]
    if slot >= 0:
        table[slot] = torch.tensor(samples, dtype=torch.float64)
    table = table.to(device)
    dist.all_reduce(table, op=dist.ReduceOp.MAX, group=ctx.group)
    return [[float(x) for x in row] for row in table.cpu().tolist()]


def node_of(global_rank: int, launch: LaunchSpec, world_size: int) -> int:
    """The node a global rank runs on: ranks are contiguous per node (torchrun)."""
    per_node = launch.nproc_per_node if launch.nnodes > 1 else world_size
    return global_rank // max(1, per_node)


def save_rank_samples(
    ctx: Context, local: list[SampleRow], launch: LaunchSpec, ids: Sequence[str] = ()
) -> int:
    """This rank's raw samples at the end of a launch, as --rank-samples says (off: dropped;
    node: to its node's first rank, which writes the node's file; all: its own file). Only
    tensors move, point to point inside a node: no object gather, nothing across nodes.
    `ids`: the launch's measurement ids in the same order on every rank, where ranks measure
    different ones (pairs, rpc's parameter server); by default `local`'s own, in its order.
    Every rank of the group calls it, with or without samples. Returns the bytes it sent."""
    ids = list(ids) or list(dict.fromkeys(row.measurement for row in local))
    if launch.rank_samples == "off" or not ids:
        return 0
    folder = Path(launch.run_dir) / RANK_SAMPLES_DIR
    me = ctx.global_ranks[ctx.rank] if ctx.global_ranks else ctx.rank
    stem = file_stem(ids[0], ctx.world_size)
    if launch.rank_samples == "all":
        if local:
            write_samples(free_path(folder, f"{stem}-rank{me}"), table_of(encode(local, ids), ids))
        return 0
    ranks = ctx.global_ranks or tuple(range(ctx.world_size))
    node = node_of(me, launch, ctx.world_size)
    members = [g for g in ranks if node_of(g, launch, ctx.world_size) == node]
    device = reduce_device(ctx)
    if me != members[0]:
        data = torch.tensor(encode(local, ids), dtype=torch.float64).reshape(-1, 6).to(device)
        count = torch.tensor([data.shape[0]], dtype=torch.int64, device=device)
        dist.send(count, dst=members[0], group=ctx.group)
        if data.shape[0]:
            dist.send(data, dst=members[0], group=ctx.group)
        return int(count.numel() * 8 + data.numel() * 8)
    rows = encode(local, ids)
    for member in members[1:]:
        count = torch.zeros(1, dtype=torch.int64, device=device)
        dist.recv(count, src=member, group=ctx.group)
        if int(count.item()):
            data = torch.zeros((int(count.item()), 6), dtype=torch.float64, device=device)
            dist.recv(data, src=member, group=ctx.group)
            rows += data.cpu().tolist()
    if rows:
        write_samples(free_path(folder, f"{stem}-node{node}"), table_of(rows, ids))
    return 0


def encode(local: list[SampleRow], ids: list[str]) -> list[list[float]]:
    """Rows as numbers: (the measurement's ordinal in `ids`, rank, trial, iter, time_us, loss).
    Every rank measures the same measurements in the same order, so the node's first rank names
    a member's ordinals with its own ids."""
    ordinal = {m: i for i, m in enumerate(ids)}
    return [[ordinal[r.measurement], r.rank, r.trial, r.iter, r.time_us, r.loss] for r in local]


def table_of(rows: list[list[float]], ids: list[str]) -> Any:
    """Encoded rows as the Parquet table of collectors/rank_samples.py."""
    columns = list(zip(*rows, strict=True))
    return samples_table(
        [ids[int(i)] for i in columns[0]],
        [int(r) for r in columns[1]],
        [int(t) for t in columns[2]],
        [int(i) for i in columns[3]],
        list(columns[4]),
        list(columns[5]),
    )


def agreed_failure(ctx: Context, error: str | None) -> str | None:
    """One rank's failure made every rank's, before a collective step the failed rank would
    never join (the others would wait in it until --timeout): None where no rank failed, else
    'rank K: <its error>' of the lowest failing rank, on every rank. `error`: this rank's."""
    errors: list[Any] = [None] * ctx.world_size
    dist.all_gather_object(errors, error, group=ctx.group)
    failed = [(rank, text) for rank, text in enumerate(errors) if text is not None]
    if not failed:
        return None
    rank, text = failed[0]
    return f"rank {rank}: {text}"
