"""reduce_scatter: every rank's input (n chunks) is reduced; rank r keeps chunk r of the result.

size_bytes is the input buffer (per-rank output bytes x n), rounded down so every rank gets one
whole 16-byte-aligned chunk, as nccl-tests does (GatherType); busbw factor (n-1)/n
(nccl-tests, src/reduce_scatter.cu). Tensor API: torch's reduce_scatter_tensor (named
reduce_scatter_single since torch 2.13, which deprecates the old name).

gloo has no reduce-scatter algorithm: torch (2.13) runs reduce_scatter_tensor on gloo as an
all_reduce of the whole input plus a copy of this rank's chunk (ProcessGroupGloo::
reduce_scatter_tensor_coalesced). That is what a gloo user gets, so it is measured as it is, and
its rows say so in the pattern column (`via_all_reduce`): not comparable with NCCL's numbers.
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
    GatherType,
    element_count,
)
from distbench.primitives.facts import placements

REDUCE_SCATTER: Callable[..., Any] = getattr(dist, "reduce_scatter_single", None) or (
    dist.reduce_scatter_tensor
)


class ReduceScatter(GatherType):
    name = "reduce_scatter"

    def build_cases(self, ctx: Context, request: CaseRequest) -> list[Case]:
        requested_bytes, dtype = request.requested_bytes, request.dtype
        count = element_count(requested_bytes, dtype, self.count_multiple(ctx.world_size, dtype))
        emulated = self.facts.emulated
        pattern = {"pattern": emulated[ctx.backend]} if ctx.backend in emulated else {}
        return [
            build_case(ctx, count, dtype, request.op, {**pattern, "placement": p})
            for p in placements(request.options)
        ]


def build_case(
    ctx: Context, count: int, dtype: torch.dtype, op: str, labels: dict[str, str]
) -> Case:
    """One placement: out (a separate output buffer) or in (the output is this rank's chunk of the
    input, nccl-tests' in-place reduce_scatter)."""
    n, me = ctx.world_size, ctx.rank
    per_rank = count // n
    reduce_op = REDUCE_OPS[op]
    mine = slice(me * per_rank, (me + 1) * per_rank)
    in_place = labels["placement"] == "in"
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

    return Case(size_bytes=count * dtype.itemsize, count=count, run=run, check=check, labels=labels)
