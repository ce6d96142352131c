"""all_gather: every rank contributes count/n elements and ends with all n contributions.

size_bytes is the whole gathered buffer (per-rank bytes x n), rounded down so every rank sends
one whole 16-byte-aligned chunk, as nccl-tests does (GatherType); busbw factor (n-1)/n
(nccl-tests, src/all_gather.cu). Tensor API: torch's
all_gather_into_tensor (named all_gather_single since torch 2.13, which deprecates the old name).
"""

from __future__ import annotations

import torch

from distbench.primitives import checkdata
from distbench.primitives.base import CaseRequest, Context, GatherType, Operations, collective

ALL_GATHER = collective("all_gather_single", "all_gather_into_tensor")


class AllGather(GatherType):
    name = "all_gather"

    def prepare(self, ctx: Context, request: CaseRequest, count: int, in_place: bool) -> Operations:
        """Out of place: a separate send buffer; in place: the send buffer is this rank's chunk
        of the gathered buffer (nccl-tests' in-place all_gather)."""
        n, me, dtype = ctx.world_size, ctx.rank, request.dtype
        per_rank = count // n
        gathered = torch.zeros(count, dtype=dtype, device=ctx.device)  # [n * count / n]
        send = (
            gathered[me * per_rank : (me + 1) * per_rank]
            if in_place
            else torch.zeros(per_rank, dtype=dtype, device=ctx.device)  # [count / n]
        )

        def run() -> None:
            ALL_GATHER(gathered, send, group=ctx.group)

        def check() -> int:
            # Chunk r of the result must hold rank r's data; unwritten elements stay wrong.
            result = checkdata.fill_sentinel(count, dtype, ctx.device)
            data = checkdata.fill_pattern(per_rank, me, dtype, ctx.device)
            if in_place:
                result[me * per_rank : (me + 1) * per_rank] = data
                data = result[me * per_rank : (me + 1) * per_rank]
            ALL_GATHER(result, data, group=ctx.group)
            chunks = result.split(per_rank)
            return sum(checkdata.wrong_moved(chunks[r], r) for r in range(n))

        return run, check
