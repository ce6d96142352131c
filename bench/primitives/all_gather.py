"""all_gather: every rank contributes count/n elements and ends with all n contributions.

size_bytes is the whole gathered buffer (per-rank bytes x n), rounded down so every rank sends
one whole 16-byte-aligned chunk, as nccl-tests does (GatherType); busbw factor (n-1)/n
(nccl-tests, src/all_gather.cu). Tensor API: torch's
all_gather_into_tensor (named all_gather_single since torch 2.13, which deprecates the old name).
Issued by c10d (build_cases), functional (its all_gather_single / all_gather_tensor), on static
buffers (CUDA graphs, symmetric memory) and async_op=True (overlap); the forms but c10d's own
check with gathered_check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from distbench.primitives import checkdata
from distbench.primitives.base import (
    CaseRequest,
    Context,
    GatherType,
    Operations,
    collective,
    element_count,
)
from distbench.primitives.forms import (
    Alloc,
    AsyncCollective,
    Check,
    Collective,
    Functional,
    Static,
)

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

    def functional(
        self, ctx: Context, request: CaseRequest, count: int, group: Any
    ) -> list[Functional]:
        import torch.distributed._functional_collectives as funcol  # --api functional|compiled only

        gather: Callable[..., torch.Tensor] = getattr(funcol, "all_gather_single", None) or (
            funcol.all_gather_tensor
        )
        per_rank = count // ctx.world_size
        collective = lambda t: gather(t, 0, group)  # noqa: E731
        return [Functional(count, collective, gathered_check(ctx, per_rank), per_rank)]

    def static(
        self, ctx: Context, request: CaseRequest, labels: dict[str, str], alloc: Alloc
    ) -> Static:
        n, me, dtype, group = ctx.world_size, ctx.rank, request.dtype, ctx.group
        count = element_count(request.requested_bytes, dtype, self.count_multiple(n, dtype))
        per_rank = count // n
        result = alloc(count, dtype)  # [n chunks of count / n]
        in_place = labels.get("placement") == "in"
        source = result[me * per_rank : (me + 1) * per_rank] if in_place else alloc(per_rank, dtype)
        run = lambda: ALL_GATHER(result, source, group=group)  # noqa: E731
        return Static(source, result, run, gathered_check(ctx, per_rank), per_rank * n)

    def overlapped(self, ctx: Context, request: CaseRequest) -> AsyncCollective:
        """By torch's older name, as tests/inject/overlap wraps it."""
        n, me, dev, group, dtype = ctx.world_size, ctx.rank, ctx.device, ctx.group, request.dtype
        count = element_count(request.requested_bytes, dtype, self.count_multiple(n, dtype))
        per_rank = count // n
        gathered = torch.zeros(count, dtype=dtype, device=dev)
        chunk = torch.zeros(per_rank, dtype=dtype, device=dev)

        def issue() -> Any:
            return dist.all_gather_into_tensor(gathered, chunk, group=group, async_op=True)

        def issue_check() -> tuple[Any, Callable[[], int]]:
            # chunk r of the result must hold rank r's data
            result = checkdata.fill_sentinel(count, dtype, dev)
            mine = checkdata.fill_pattern(per_rank, me, dtype, dev)
            work = dist.all_gather_into_tensor(result, mine, group=group, async_op=True)
            chunks = result.split(per_rank)
            return work, lambda: sum(checkdata.wrong_moved(chunks[r], r) for r in range(n))

        return AsyncCollective(count * dtype.itemsize, count, issue, issue_check)


def gathered_check(ctx: Context, per_rank: int) -> Check:
    """Chunk r of the output must hold rank r's data."""

    def check(issue: Collective, dtype: torch.dtype, inputs: int) -> int:
        out = issue(checkdata.fill_pattern(per_rank, ctx.rank, dtype, ctx.device))
        chunks = out.split(per_rank)
        return sum(checkdata.wrong_moved(chunks[r], r) for r in range(ctx.world_size))

    return check
