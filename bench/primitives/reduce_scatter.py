"""reduce_scatter: every rank's input (n chunks) is reduced; rank r keeps chunk r of the result.

size_bytes is the input buffer (per-rank output bytes x n), rounded down so every rank gets one
whole 16-byte-aligned chunk, as nccl-tests does (GatherType); busbw factor (n-1)/n
(nccl-tests, src/reduce_scatter.cu). Tensor API: torch's reduce_scatter_tensor (named
reduce_scatter_single since torch 2.13, which deprecates the old name).

gloo has no reduce-scatter algorithm: torch (2.13) runs reduce_scatter_tensor on gloo as an
all_reduce of the whole input plus a copy of this rank's chunk (ProcessGroupGloo::
reduce_scatter_tensor_coalesced). That is what a gloo user gets, so it is measured as it is, and
its rows say so in the pattern column (`via_all_reduce`): not comparable with NCCL's numbers.

Issued by c10d (build_cases), functional (its reduce_scatter_single / reduce_scatter_tensor), on
static buffers (CUDA graphs, symmetric memory) and async_op=True (overlap); the forms but c10d's
own check with forms.reduced_check from this rank's chunk.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from distbench.primitives import checkdata
from distbench.primitives.base import (
    REDUCE_OPS,
    CaseRequest,
    Context,
    GatherType,
    Operations,
    collective,
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

REDUCE_SCATTER = collective("reduce_scatter_single", "reduce_scatter_tensor")


class ReduceScatter(GatherType):
    name = "reduce_scatter"

    def prepare(self, ctx: Context, request: CaseRequest, count: int, in_place: bool) -> Operations:
        """Out of place: a separate output buffer; in place: the output is this rank's chunk of
        the input (nccl-tests' in-place reduce_scatter)."""
        n, me, dtype, op = ctx.world_size, ctx.rank, request.dtype, request.op
        per_rank = count // n
        reduce_op = REDUCE_OPS[op]
        mine = slice(me * per_rank, (me + 1) * per_rank)
        # Zeros stay zero under every op: no overflow, no denormals, whatever the iteration count.
        source = torch.zeros(count, dtype=dtype, device=ctx.device)  # [n * count / n]
        result = source[mine] if in_place else torch.zeros(per_rank, dtype=dtype, device=ctx.device)

        def run() -> None:
            REDUCE_SCATTER(result, source, op=reduce_op, group=ctx.group)

        def check() -> int:
            # Rank r must end with positions r * per_rank.. of the reduction of every input.
            data = checkdata.fill(count, me, n, dtype, ctx.device, op)
            out = data[mine] if in_place else checkdata.fill_sentinel(per_rank, dtype, ctx.device)
            REDUCE_SCATTER(out, data, op=reduce_op, group=ctx.group)
            return checkdata.wrong_reduced(out, n, op, start=me * per_rank)

        return run, check

    def functional(
        self, ctx: Context, request: CaseRequest, count: int, group: Any
    ) -> list[Functional]:
        import torch.distributed._functional_collectives as funcol  # --api functional|compiled only

        scatter: Callable[..., torch.Tensor] = getattr(funcol, "reduce_scatter_single", None) or (
            funcol.reduce_scatter_tensor
        )
        op, per_rank = FUNCOL_OPS[request.op], count // ctx.world_size
        emulated = self.facts.emulated
        labels = {"pattern": emulated[ctx.backend]} if ctx.backend in emulated else {}
        collective = lambda t: scatter(t, op, 0, group)  # noqa: E731
        check = reduced_check(ctx, request.op, ctx.rank * per_rank)
        return [Functional(count, collective, check, count, labels)]

    def static(
        self, ctx: Context, request: CaseRequest, labels: dict[str, str], alloc: Alloc
    ) -> Static:
        n, me, dtype, group = ctx.world_size, ctx.rank, request.dtype, ctx.group
        count = element_count(request.requested_bytes, dtype, self.count_multiple(n, dtype))
        per_rank = count // n
        mine = slice(me * per_rank, (me + 1) * per_rank)
        op = REDUCE_OPS[request.op]
        source = alloc(count, dtype)
        result = source[mine] if labels.get("placement") == "in" else alloc(per_rank, dtype)
        run = lambda: REDUCE_SCATTER(result, source, op=op, group=group)  # noqa: E731
        return Static(source, result, run, reduced_check(ctx, request.op, me * per_rank), count)

    def overlapped(self, ctx: Context, request: CaseRequest) -> AsyncCollective:
        """By torch's older name, as tests/inject/overlap wraps it."""
        n, me, dev, group, dtype = ctx.world_size, ctx.rank, ctx.device, ctx.group, request.dtype
        count = element_count(request.requested_bytes, dtype, self.count_multiple(n, dtype))
        per_rank, op = count // n, REDUCE_OPS[request.op]
        source = torch.zeros(count, dtype=dtype, device=dev)
        chunk = torch.zeros(per_rank, dtype=dtype, device=dev)

        def issue() -> Any:
            return dist.reduce_scatter_tensor(chunk, source, op=op, group=group, async_op=True)

        def issue_check() -> tuple[Any, Callable[[], int]]:
            data = checkdata.fill(count, me, n, dtype, dev, request.op)
            out = checkdata.fill_sentinel(per_rank, dtype, dev)
            work = dist.reduce_scatter_tensor(out, data, op=op, group=group, async_op=True)
            return work, lambda: checkdata.wrong_reduced(out, n, request.op, start=me * per_rank)

        return AsyncCollective(count * dtype.itemsize, count, issue, issue_check)
