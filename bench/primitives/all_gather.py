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

ALL_GATHER: Callable[..., Any] = getattr(dist, "all_gather_single", None) or (
    dist.all_gather_into_tensor
)


class AllGather(GatherType):
    name = "all_gather"

    def build_cases(self, ctx: Context, request: CaseRequest) -> list[Case]:
        requested_bytes, dtype = request.requested_bytes, request.dtype
        n = ctx.world_size
        count = element_count(requested_bytes, dtype, self.count_multiple(n, dtype))
        per_rank = count // n
        send = torch.zeros(per_rank, dtype=dtype, device=ctx.device)  # [count / n]
        gathered = torch.zeros(count, dtype=dtype, device=ctx.device)  # [n * count / n]

        def run() -> None:
            ALL_GATHER(gathered, send, group=ctx.group)

        def check() -> int:
            # Chunk r of the result must hold rank r's data; unwritten elements stay wrong.
            data = checkdata.fill_pattern(per_rank, ctx.rank, dtype, ctx.device)
            result = checkdata.fill_sentinel(count, dtype, ctx.device)
            ALL_GATHER(result, data, group=ctx.group)
            chunks = result.split(per_rank)
            return sum(checkdata.wrong_moved(chunks[r], r) for r in range(n))

        return [Case(size_bytes=count * dtype.itemsize, count=count, run=run, check=check)]
