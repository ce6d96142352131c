"""broadcast: the root's buffer is copied to every rank (in place).

size_bytes is one rank's buffer; busbw factor 1 (nccl-tests, src/broadcast.cu). `--root all`
gives one case per root, all sharing one buffer. Issued by c10d (build_cases), functional
(funcol.broadcast), on static buffers (CUDA graphs) and async_op=True (overlap); the forms but
c10d's own check with moved_check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from distbench.primitives import checkdata
from distbench.primitives.base import Case, CaseRequest, Context, Rooted, element_count
from distbench.primitives.facts import root_ranks
from distbench.primitives.forms import (
    Alloc,
    AsyncCollective,
    Check,
    Collective,
    Functional,
    Static,
    root_of,
)


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

    def functional(
        self, ctx: Context, request: CaseRequest, count: int, group: Any
    ) -> list[Functional]:
        return [
            Functional(
                count, broadcast_from(src, group), moved_check(ctx, src), count, {"root": str(src)}
            )
            for src in root_ranks(request.root, ctx.world_size)
        ]

    def static(
        self, ctx: Context, request: CaseRequest, labels: dict[str, str], alloc: Alloc
    ) -> Static:
        count = element_count(request.requested_bytes, request.dtype)
        src, group = int(labels["root"]), ctx.group
        source = result = alloc(count, request.dtype)
        run = lambda: dist.broadcast(source, src=ctx.global_ranks[src], group=group)  # noqa: E731
        return Static(source, result, run, moved_check(ctx, src), count)

    def overlapped(self, ctx: Context, request: CaseRequest) -> AsyncCollective:
        me, dev, group, dtype = ctx.rank, ctx.device, ctx.group, request.dtype
        count = element_count(request.requested_bytes, dtype)
        src = int(request.root)
        root = root_of(ctx, src)
        buffer = torch.zeros(count, dtype=dtype, device=dev)

        def issue() -> Any:
            return dist.broadcast(buffer, src=root, group=group, async_op=True)

        def issue_check() -> tuple[Any, Callable[[], int]]:
            # the other ranks start wrong everywhere
            if me == src:
                data = checkdata.fill_pattern(count, src, dtype, dev)
            else:
                data = checkdata.fill_sentinel(count, dtype, dev)
            work = dist.broadcast(data, src=root, group=group, async_op=True)
            return work, lambda: checkdata.wrong_moved(data, src)

        return AsyncCollective(count * dtype.itemsize, count, issue, issue_check)


def broadcast_from(src: int, group: Any) -> Collective:
    """funcol.broadcast from `src`, a rank of `group` (the functional ops take the group's own
    rank numbers, as the ProcessGroup does)."""
    import torch.distributed._functional_collectives as funcol  # --api functional|compiled only

    return lambda tensor: funcol.broadcast(tensor, src, group)


def moved_check(ctx: Context, src: int) -> Check:
    """Every rank ends with the root's data (non-roots start from the sentinel)."""

    def check(issue: Collective, dtype: torch.dtype, count: int) -> int:
        if ctx.rank == src:
            data = checkdata.fill_pattern(count, src, dtype, ctx.device)
        else:
            data = checkdata.fill_sentinel(count, dtype, ctx.device)
        return checkdata.wrong_moved(issue(data), src)

    return check
