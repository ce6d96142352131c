"""all_reduce: every rank ends with the reduction of all ranks' buffers (in place).

size_bytes is one rank's buffer; busbw factor 2(n-1)/n (nccl-tests, src/all_reduce.cu).
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
    PrimitiveBase,
    element_count,
)


class AllReduce(PrimitiveBase):
    name = "all_reduce"

    def busbw_factor(self, world_size: int) -> float:
        return 2 * (world_size - 1) / world_size

    def build_cases(self, ctx: Context, request: CaseRequest) -> list[Case]:
        requested_bytes, dtype, op = request.requested_bytes, request.dtype, request.op
        count = element_count(requested_bytes, dtype)
        # Zeros stay zero under every op: no overflow, no denormals, whatever the iteration count.
        buffer = torch.zeros(count, dtype=dtype, device=ctx.device)
        reduce_op = REDUCE_OPS[op]

        def run() -> None:
            dist.all_reduce(buffer, op=reduce_op, group=ctx.group)

        def check() -> int:
            data = checkdata.fill(count, ctx.rank, ctx.world_size, dtype, ctx.device, op)
            dist.all_reduce(data, op=reduce_op, group=ctx.group)
            return checkdata.wrong_reduced(data, ctx.world_size, op)

        return [Case(size_bytes=count * dtype.itemsize, count=count, run=run, check=check)]
