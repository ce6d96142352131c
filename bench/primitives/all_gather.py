"""all_gather: every rank contributes count/n elements and ends with all n contributions.

size_bytes is the whole gathered buffer (per-rank bytes x n), rounded down so every rank sends
one whole 16-byte-aligned chunk, as nccl-tests does (GatherType); busbw factor (n-1)/n
(nccl-tests, src/all_gather.cu). Tensor API: torch's
all_gather_into_tensor (named all_gather_single since torch 2.13, which deprecates the old name).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from distbench.primitives import checkdata
from distbench.primitives.base import Case, CaseRequest, Context, GatherType, element_count
from distbench.primitives.facts import placements

ALL_GATHER: Callable[..., Any] = getattr(dist, "all_gather_single", None) or (
    dist.all_gather_into_tensor
)


class AllGather(GatherType):
    name = "all_gather"

    def build_cases(self, ctx: Context, request: CaseRequest) -> list[Case]:
        requested_bytes, dtype = request.requested_bytes, request.dtype
        count = element_count(requested_bytes, dtype, self.count_multiple(ctx.world_size, dtype))
        return [build_case(ctx, count, dtype, p) for p in placements(request.options)]


def build_case(ctx: Context, count: int, dtype: torch.dtype, placement: str) -> Case:
    """One placement: out (a separate send buffer) or in (the send buffer is this rank's chunk of
    the gathered buffer, nccl-tests' in-place all_gather)."""
    n, me = ctx.world_size, ctx.rank
    per_rank = count // n
    gathered = torch.zeros(count, dtype=dtype, device=ctx.device)  # [n * count / n]
    send = (
        gathered[me * per_rank : (me + 1) * per_rank]
        if placement == "in"
        else torch.zeros(per_rank, dtype=dtype, device=ctx.device)  # [count / n]
    )

    def run() -> None:
        ALL_GATHER(gathered, send, group=ctx.group)

    def check() -> int:
        # Chunk r of the result must hold rank r's data; unwritten elements stay wrong.
        result = checkdata.fill_sentinel(count, dtype, ctx.device)
        data = checkdata.fill_pattern(per_rank, me, dtype, ctx.device)
        if placement == "in":
            result[me * per_rank : (me + 1) * per_rank] = data
            data = result[me * per_rank : (me + 1) * per_rank]
        ALL_GATHER(result, data, group=ctx.group)
        chunks = result.split(per_rank)
        return sum(checkdata.wrong_moved(chunks[r], r) for r in range(n))

    return Case(
        size_bytes=count * dtype.itemsize,
        count=count,
        run=run,
        check=check,
        labels={"placement": placement},
    )
