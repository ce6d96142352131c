"""One c10d collective on buffers allocated by the caller and kept (CUDA graphs' "static" inputs
and outputs): comm/symmetric.py allocates them in symmetric memory and times the op on them;
comm/graph.py captures the op on them for --check. The sizes, rounding and in-place forms are the
c10d cases' (primitives/*), and the checks are comm/api_cases.py's: the same check data and
counts as the c10d primitive's own check, fed through `issue`, which copies the data in, runs the
op (eagerly, or by replaying a captured graph) and returns the output buffer. The ops go through
the names the c10d primitives call (dist.*, all_gather.ALL_GATHER ...), looked up at each call,
so the mutation suite's corruptions (tests/comm/mutation/corrupt.py) reach them too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist

from distbench.comm.api_cases import (
    Check,
    Collective,
    exchanged_check,
    gathered_check,
    moved_check,
    reduced_check,
    split_check,
)
from distbench.primitives import all_gather, checkdata, get_primitive, reduce_scatter
from distbench.primitives.all_to_allv import split_matrix
from distbench.primitives.base import REDUCE_OPS, CaseRequest, Context, element_count
from distbench.primitives.facts import placements, root_ranks

Alloc = Callable[[int, torch.dtype], torch.Tensor]
"""(elements, dtype) -> a zeroed 1-D tensor on the rank's device."""


def regular_buffers(ctx: Context) -> Alloc:
    """Zeroed buffers from torch's default allocator (comm/symmetric.py has the other one)."""
    return lambda count, dtype: torch.zeros(count, dtype=dtype, device=ctx.device)


@dataclass(frozen=True)
class Static:
    """A collective's buffers, the op on them and its check."""

    source: torch.Tensor
    """What the op sends (check data is copied here)."""
    result: torch.Tensor
    """What the op writes (the check reads it); a view of `source` in place."""
    run: Callable[[], None]
    check: Check
    count: int
    """Elements of the row's size_bytes (the c10d case's)."""


def case_labels(primitive: str, request: CaseRequest, world_size: int) -> list[dict[str, str]]:
    """The labels of the c10d cases of one size, in their order: one per root (broadcast), per
    placement (gather types) or one; build_static builds the buffers of each."""
    if primitive == "broadcast":
        return [{"root": str(src)} for src in root_ranks(request.root, world_size)]
    if get_primitive(primitive).facts.placeable:
        return [{"placement": p} for p in placements(request.options)]
    return [{}]


def build_static(
    ctx: Context, primitive: str, request: CaseRequest, labels: dict[str, str], alloc: Alloc
) -> Static:
    """The buffers of the c10d case with these labels, from `alloc`; the same op on them."""
    group: Any = ctx.group
    n, me, dtype = ctx.world_size, ctx.rank, request.dtype
    multiple = get_primitive(primitive).count_multiple(n, dtype)
    count = element_count(request.requested_bytes, dtype, multiple)
    per_rank = count // n
    mine = slice(me * per_rank, (me + 1) * per_rank)
    in_place = labels.get("placement") == "in"
    op = REDUCE_OPS[request.op]
    if primitive == "all_reduce":
        source = result = alloc(count, dtype)
        run = lambda: dist.all_reduce(source, op=op, group=group)  # noqa: E731
        return Static(source, result, run, reduced_check(ctx, request.op, 0), count)
    if primitive == "broadcast":
        src = int(labels["root"])
        source = result = alloc(count, dtype)
        run = lambda: dist.broadcast(source, src=ctx.global_ranks[src], group=group)  # noqa: E731
        return Static(source, result, run, moved_check(ctx, src), count)
    if primitive == "all_gather":
        result = alloc(count, dtype)  # [n chunks of count / n]
        source = result[mine] if in_place else alloc(per_rank, dtype)
        run = lambda: all_gather.ALL_GATHER(result, source, group=group)  # noqa: E731
        return Static(source, result, run, gathered_check(ctx, per_rank), per_rank * n)
    if primitive == "reduce_scatter":
        source = alloc(count, dtype)
        result = source[mine] if in_place else alloc(per_rank, dtype)
        run = lambda: reduce_scatter.REDUCE_SCATTER(result, source, op=op, group=group)  # noqa: E731
        return Static(source, result, run, reduced_check(ctx, request.op, me * per_rank), count)
    if primitive == "all_to_all":
        source = alloc(count, dtype)
        result = source if in_place else alloc(count, dtype)
        run = lambda: dist.all_to_all_single(result, source, group=group)  # noqa: E731
        return Static(source, result, run, exchanged_check(ctx, per_rank), count)
    if primitive == "all_to_allv":
        matrix, _ = split_matrix(n, request.requested_bytes // dtype.itemsize, request.options)
        received = [row[me] for row in matrix]
        source, result = alloc(sum(matrix[me]), dtype), alloc(sum(received), dtype)

        def exchange() -> None:
            dist.all_to_all_single(result, source, received, matrix[me], group=group)

        return Static(source, result, exchange, split_check(ctx, matrix), sum(matrix[me]))
    raise ValueError(f"no static form of {primitive}")  # the CLI refused it


def issue_with(static: Static, execute: Callable[[], None]) -> Collective:
    """The check's issuing call: the result buffer reset to the sentinel (so an element the op
    leaves unwritten is wrong), the check data copied into the source, `execute()`, the result."""

    def issue(data: torch.Tensor) -> torch.Tensor:
        static.result.fill_(checkdata.sentinel(data.dtype))
        static.source.copy_(data)
        execute()
        return static.result

    return issue


def check_static(static: Static, execute: Callable[[], None] | None = None) -> int:
    """Wrong elements on this rank after the op ran on the check data: eagerly, or by
    `execute()` (comm/graph.py: a replay of the op captured on these buffers)."""
    issue = issue_with(static, execute or static.run)
    return static.check(issue, static.source.dtype, static.source.numel())
