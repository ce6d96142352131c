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

import torch

from distbench.primitives import checkdata
from distbench.primitives.base import (
    REDUCE_OPS,
    CaseRequest,
    Context,
    GatherType,
    Operations,
    collective,
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
