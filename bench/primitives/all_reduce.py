"""all_reduce: every rank ends with the reduction of all ranks' buffers (in place).

size_bytes is one rank's buffer; busbw factor 2(n-1)/n (nccl-tests, src/all_reduce.cu).
Issued by c10d (build_cases), functional (funcol.all_reduce), on static buffers (CUDA graphs,
symmetric memory) and async_op=True (overlap); every form but c10d's own checks with
forms.reduced_check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
from distbench.primitives.forms import (
    FUNCOL_OPS,
    Alloc,
    AsyncCollective,
    Functional,
    Static,
    reduced_check,
)


class AllReduce(PrimitiveBase):
    name = "all_reduce"

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

    def functional(
        self, ctx: Context, request: CaseRequest, count: int, group: Any
    ) -> list[Functional]:
        import torch.distributed._functional_collectives as funcol  # --api functional|compiled only

        op = FUNCOL_OPS[request.op]
        check = reduced_check(ctx, request.op, 0)
        return [Functional(count, lambda t: funcol.all_reduce(t, op, group), check, count)]

    def static(
        self, ctx: Context, request: CaseRequest, labels: dict[str, str], alloc: Alloc
    ) -> Static:
        count = element_count(request.requested_bytes, request.dtype)
        source = result = alloc(count, request.dtype)
        op, group = REDUCE_OPS[request.op], ctx.group
        run = lambda: dist.all_reduce(source, op=op, group=group)  # noqa: E731
        return Static(source, result, run, reduced_check(ctx, request.op, 0), count)

    def overlapped(self, ctx: Context, request: CaseRequest) -> AsyncCollective:
        n, me, dev, group, dtype = ctx.world_size, ctx.rank, ctx.device, ctx.group, request.dtype
        count = element_count(request.requested_bytes, dtype)
        buffer = torch.zeros(count, dtype=dtype, device=dev)
        op = REDUCE_OPS[request.op]

        def issue() -> Any:
            return dist.all_reduce(buffer, op=op, group=group, async_op=True)

        def issue_check() -> tuple[Any, Callable[[], int]]:
            data = checkdata.fill(count, me, n, dtype, dev, request.op)
            work = dist.all_reduce(data, op=op, group=group, async_op=True)
            return work, lambda: checkdata.wrong_reduced(data, n, request.op)

        return AsyncCollective(count * dtype.itemsize, count, issue, issue_check)
