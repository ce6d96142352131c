"""broadcast: the root's buffer is copied to every rank (in place).

size_bytes is one rank's buffer; busbw factor 1 (nccl-tests, src/broadcast.cu). `--root all`
gives one case per root, all sharing one buffer.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from distbench.primitives import checkdata
from distbench.primitives.base import Case, CaseRequest, Context, Rooted, element_count
from distbench.primitives.facts import root_ranks


class Broadcast(Rooted):
    name = "broadcast"

    def build_cases(self, ctx: Context, request: CaseRequest) -> list[Case]:
        requested_bytes, dtype, root = request.requested_bytes, request.dtype, request.root
        count = element_count(requested_bytes, dtype)
        buffer = torch.zeros(count, dtype=dtype, device=ctx.device)
        return [self._case(ctx, buffer, count, src) for src in root_ranks(root, ctx.world_size)]

    def _case(self, ctx: Context, buffer: torch.Tensor, count: int, src: int) -> Case:
        global_src = ctx.global_ranks[src]

        def run() -> None:
            dist.broadcast(buffer, src=global_src, group=ctx.group)

        def check() -> int:
            # The other ranks start wrong everywhere, so a rank the data never reached stands out.
            dtype = buffer.dtype
            if ctx.rank == src:
                data = checkdata.fill_pattern(count, src, dtype, ctx.device)
            else:
                data = checkdata.fill_sentinel(count, dtype, ctx.device)
            dist.broadcast(data, src=global_src, group=ctx.group)
            return checkdata.wrong_moved(data, src)

        return Case(
            size_bytes=count * buffer.dtype.itemsize,
            count=count,
            run=run,
            check=check,
            labels={"root": str(src)},
        )
