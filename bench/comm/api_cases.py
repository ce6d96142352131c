"""The cases of one size under --api (comm/api.py says what each api is): c10d's are the
primitive's own; functional and compiled ones time `wait_tensor(<functional collective>(input))`
eagerly or through torch.compile, out of place as that API is, and check the output it returns
with the same check data and counts as the c10d primitive.

A compiled case compiles when it is built: the compiled function's first call (which also runs
the collective once, on every rank) is timed and kept as the row's compile_s (rank 0's seconds),
so neither the warm-up nor the timed trials include compilation. dynamic=False compiles one graph
per size, fullgraph=True refuses a graph break, and the recompile limit is raised so that a sweep
of many sizes never falls back to eager in silence.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

from distbench.comm.api import compile_backend
from distbench.primitives import checkdata, get_primitive
from distbench.primitives.all_to_allv import Matrix, byte_columns, split_matrix, wrong_received
from distbench.primitives.base import Case, CaseRequest, Context, element_count
from distbench.primitives.facts import root_ranks

FUNCOL_OPS = {"sum": "sum", "prod": "product", "max": "max", "min": "min", "avg": "avg"}
"""--op -> the reduceOp string of torch's functional collectives."""
RECOMPILE_LIMIT = 4096
"""torch._dynamo's recompile limit while distbench compiles (default 8: one graph per size)."""

Collective = Callable[[torch.Tensor], torch.Tensor]
Check = Callable[[Collective, torch.dtype, int], int]
"""(the issuing call, dtype, input elements) -> wrong elements on this rank."""

ALL_GATHER: Callable[..., torch.Tensor] = getattr(funcol, "all_gather_single", None) or (
    funcol.all_gather_tensor
)
REDUCE_SCATTER: Callable[..., torch.Tensor] = getattr(funcol, "reduce_scatter_single", None) or (
    funcol.reduce_scatter_tensor
)


def build_cases(ctx: Context, primitive: str, request: CaseRequest) -> list[Case]:
    """The cases of one size for request.api (c10d: the primitive's own build_cases)."""
    if request.api == "c10d":
        return get_primitive(primitive).build_cases(ctx, request)
    group: Any = ctx.group if ctx.group is not None else dist.group.WORLD
    n = ctx.world_size
    prim = get_primitive(primitive)
    count = element_count(
        request.requested_bytes, request.dtype, prim.count_multiple(n, request.dtype)
    )
    if primitive == "broadcast":
        return [
            finish(
                ctx,
                request,
                count,
                broadcast_from(src, group),
                moved_check(ctx, src),
                {"root": str(src)},
                count,
            )
            for src in root_ranks(request.root, n)
        ]
    if primitive == "all_to_allv":
        return [uneven_case(ctx, request, group)]
    op = FUNCOL_OPS[request.op]
    per_rank = count // n
    collectives: dict[str, tuple[Collective, Check, int]] = {
        "all_reduce": (
            lambda t: funcol.all_reduce(t, op, group),
            reduced_check(ctx, request.op, 0),
            count,
        ),
        "reduce_scatter": (
            lambda t: REDUCE_SCATTER(t, op, 0, group),
            reduced_check(ctx, request.op, ctx.rank * per_rank),
            count,
        ),
        "all_gather": (lambda t: ALL_GATHER(t, 0, group), gathered_check(ctx, per_rank), per_rank),
        "all_to_all": (
            lambda t: funcol.all_to_all_single(t, None, None, group),
            exchanged_check(ctx, per_rank),
            count,
        ),
    }
    collective, check, inputs = collectives[primitive]
    emulated = prim.facts.emulated if primitive == "reduce_scatter" else {}
    labels = {"pattern": emulated[ctx.backend]} if ctx.backend in emulated else {}
    return [finish(ctx, request, count, collective, check, labels, inputs)]


def uneven_case(ctx: Context, request: CaseRequest, group: Any) -> Case:
    """alltoallv: all_to_all_single with the c10d case's split sizes and byte columns
    (primitives/all_to_allv.py); every rank sends the same number of elements."""
    me = ctx.rank
    matrix, label = split_matrix(
        ctx.world_size, request.requested_bytes // request.dtype.itemsize, request.options
    )
    received = [row[me] for row in matrix]
    sent = sum(matrix[me])

    def collective(tensor: torch.Tensor) -> torch.Tensor:
        return funcol.all_to_all_single(tensor, received, matrix[me], group)

    labels = {"pattern": label}
    case = finish(ctx, request, sent, collective, split_check(ctx, matrix), labels, sent)
    columns, busiest, factor = byte_columns(matrix, request.dtype.itemsize)
    return dataclasses.replace(case, bw_bytes=busiest, busbw_factor=factor, columns=columns)


def broadcast_from(src: int, group: Any) -> Collective:
    """funcol.broadcast from `src`, a rank of `group` (the functional ops take the group's own
    rank numbers, as the ProcessGroup does)."""
    return lambda tensor: funcol.broadcast(tensor, src, group)


def finish(
    ctx: Context,
    request: CaseRequest,
    count: int,
    collective: Collective,
    check: Check,
    labels: dict[str, str],
    inputs: int,
) -> Case:
    """One case of `count` elements (size_bytes as c10d's), its input of `inputs` elements, the
    (compiled) call and its check; compiled here if asked."""
    dtype = request.dtype
    source = torch.zeros(inputs, dtype=dtype, device=ctx.device)

    def call(tensor: torch.Tensor) -> torch.Tensor:
        return funcol.wait_tensor(collective(tensor))

    issue: Callable[[torch.Tensor], Any] = call
    compile_s = math.nan
    backend = compile_backend(request.api)
    if backend:
        torch._dynamo.config.recompile_limit = max(
            RECOMPILE_LIMIT, torch._dynamo.config.recompile_limit
        )
        issue = torch.compile(call, backend=backend, fullgraph=True, dynamic=False)
        begin = time.perf_counter()
        issue(source)  # compiles, and runs the collective once on every rank
        compile_s = time.perf_counter() - begin

    def run() -> None:
        issue(source)

    return Case(
        size_bytes=count * dtype.itemsize,
        count=count,
        run=run,
        check=lambda: check(issue, dtype, inputs),
        labels={**labels, **({} if math.isnan(compile_s) else {"compile_s": f"{compile_s:.6f}"})},
    )


def reduced_check(ctx: Context, op: str, start: int) -> Check:
    """all_reduce (start 0) and reduce_scatter (this rank's chunk of the reduced input)."""

    def check(issue: Collective, dtype: torch.dtype, count: int) -> int:
        data = checkdata.fill(count, ctx.rank, ctx.world_size, dtype, ctx.device, op)
        return checkdata.wrong_reduced(issue(data), ctx.world_size, op, start=start)

    return check


def gathered_check(ctx: Context, per_rank: int) -> Check:
    """all_gather: chunk r of the output must hold rank r's data."""

    def check(issue: Collective, dtype: torch.dtype, inputs: int) -> int:
        out = issue(checkdata.fill_pattern(per_rank, ctx.rank, dtype, ctx.device))
        chunks = out.split(per_rank)
        return sum(checkdata.wrong_moved(chunks[r], r) for r in range(ctx.world_size))

    return check


def exchanged_check(ctx: Context, chunk: int) -> Check:
    """all_to_all: chunk s of the output is sender s's chunk for this rank."""

    def check(issue: Collective, dtype: torch.dtype, count: int) -> int:
        me = ctx.rank
        out = issue(checkdata.fill_pattern(count, me, dtype, ctx.device)).split(chunk)
        return sum(
            checkdata.wrong_moved(out[s], s, start=me * chunk) for s in range(ctx.world_size)
        )

    return check


def split_check(ctx: Context, matrix: Matrix) -> Check:
    """alltoallv: the segment from each sender holds its positions for this rank."""

    def check(issue: Collective, dtype: torch.dtype, count: int) -> int:
        data = checkdata.fill_pattern(count, ctx.rank, dtype, ctx.device)
        return wrong_received(issue(data), matrix, ctx.rank)

    return check


def moved_check(ctx: Context, src: int) -> Check:
    """broadcast: every rank ends with the root's data (non-roots start from the sentinel)."""

    def check(issue: Collective, dtype: torch.dtype, count: int) -> int:
        if ctx.rank == src:
            data = checkdata.fill_pattern(count, src, dtype, ctx.device)
        else:
            data = checkdata.fill_sentinel(count, dtype, ctx.device)
        return checkdata.wrong_moved(issue(data), src)

    return check
