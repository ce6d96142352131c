"""What the runners compute over the ranks of a group, outside every timed region: the per-sample
maximum (what a training step waits for), sums, every rank's raw samples gathered to rank 0, and
the `ranks` column that names the group.

Reductions of numbers run on the group's backend: on the GPU under nccl (NCCL moves GPU memory
only), on the CPU under gloo. One collective per call, whatever the world size.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist

from distbench.collectors.schema import SampleRow
from distbench.collectors.sink import CsvSink
from distbench.primitives.base import Context


def ranks_label(ranks: tuple[int, ...]) -> str:
    """(0, 1, 2, 3) -> '0-3'; a non-contiguous set is listed with ';'."""
    if ranks and list(ranks) == list(range(ranks[0], ranks[-1] + 1)):
        return f"{ranks[0]}-{ranks[-1]}" if len(ranks) > 1 else str(ranks[0])
    return ";".join(str(r) for r in ranks)


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


def gather_samples(ctx: Context, local: list[SampleRow], sink: CsvSink | None) -> None:
    """Every rank's raw samples to rank 0, in one collective at the end of the sweep; rank 0
    writes them to `sink` in rank order."""
    gathered: list[list[SampleRow] | None] = [None] * ctx.world_size if ctx.rank == 0 else []
    dist.gather_object(
        local, gathered if ctx.rank == 0 else None, dst=ctx.global_ranks[0], group=ctx.group
    )
    if sink is not None:
        for rows in gathered:
            sink.write(rows or [])


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
