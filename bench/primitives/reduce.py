"""reduce: the root ends with the reduction of every rank's buffer (in place).

size_bytes is one rank's buffer; busbw factor 1 (nccl-tests, src/reduce.cu). `--root all` gives
one case per root, all sharing one buffer. Only the root's result is defined, so only it is checked.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from distbench.primitives import checkdata
from distbench.primitives.base import (
    REDUCE_OPS,
    Case,
    CaseRequest,
    Context,
    Rooted,
    element_count,
)
from distbench.primitives.facts import root_ranks


class Reduce(Rooted):
    name = "reduce"

    def build_cases(self, ctx: Context, request: CaseRequest) -> list[Case]:
        requested_bytes, dtype, op, root = (
            request.requested_bytes,
            request.dtype,
            request.op,
            request.root,
        )
        count = element_count(requested_bytes, dtype)
        # Zeros stay zero under every op: no overflow, no denormals, whatever the iteration count.
        buffer = torch.zeros(count, dtype=dtype, device=ctx.device)
        return [self._case(ctx, buffer, count, op, dst) for dst in root_ranks(root, ctx.world_size)]

    def _case(self, ctx: Context, buffer: torch.Tensor, count: int, op: str, dst: int) -> Case:
        global_dst = ctx.global_ranks[dst]
        reduce_op = REDUCE_OPS[op]
        dtype = buffer.dtype

        def run() -> None:
            dist.reduce(buffer, dst=global_dst, op=reduce_op, group=ctx.group)

        def check() -> int:
            data = checkdata.fill(count, ctx.rank, ctx.world_size, dtype, ctx.device, op)
            dist.reduce(data, dst=global_dst, op=reduce_op, group=ctx.group)
            if ctx.rank != dst:
                return 0  # torch leaves non-root buffers undefined
            return checkdata.wrong_reduced(data, ctx.world_size, op)

        return Case(
            size_bytes=count * dtype.itemsize,
            count=count,
            run=run,
            check=check,
            labels={"root": str(dst)},
        )
