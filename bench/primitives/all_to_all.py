"""all_to_all: every rank splits its buffer into n chunks and sends chunk j to rank j.

size_bytes is one rank's whole send buffer (per-peer bytes x n), rounded down so every chunk is
whole and 16-byte aligned, as nccl-tests does (GatherType); busbw factor (n-1)/n (nccl-tests,
src/alltoall.cu). Tensor API: all_to_all_single with equal splits. Issued by c10d
(build_cases), functional (funcol.all_to_all_single) and on static buffers (CUDA graphs); the
forms but c10d's own check with exchanged_check.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist

from distbench.primitives import checkdata
from distbench.primitives.base import (
    CaseRequest,
    Context,
    GatherType,
    Operations,
    element_count,
)
from distbench.primitives.forms import Alloc, Check, Collective, Functional, Static


class AllToAll(GatherType):
    name = "all_to_all"

    def prepare(self, ctx: Context, request: CaseRequest, count: int, in_place: bool) -> Operations:
        """Out of place: separate send and receive buffers; in place: one buffer for both, as
        nccl-tests' in-place alltoall (gloo gets that wrong, so the CLI refuses it there)."""
        n, me, dtype = ctx.world_size, ctx.rank, request.dtype
        chunk = count // n
        received = torch.zeros(count, dtype=dtype, device=ctx.device)  # [n chunks of count / n]
        send = received if in_place else torch.zeros_like(received)

        def run() -> None:
            dist.all_to_all_single(received, send, group=ctx.group)

        def check() -> int:
            # Rank s sends its data, chunk j (positions j * chunk..) to rank j: chunk s of what
            # rank r receives must be positions r * chunk.. of rank s's data.
            data = checkdata.fill_pattern(count, me, dtype, ctx.device)
            out = data if in_place else checkdata.fill_sentinel(count, dtype, ctx.device)
            dist.all_to_all_single(out, data, group=ctx.group)
            chunks = out.split(chunk)
            return sum(checkdata.wrong_moved(chunks[s], s, start=me * chunk) for s in range(n))

        return run, check

    def functional(
        self, ctx: Context, request: CaseRequest, count: int, group: Any
    ) -> list[Functional]:
        import torch.distributed._functional_collectives as funcol  # --api functional|compiled only

        collective = lambda t: funcol.all_to_all_single(t, None, None, group)  # noqa: E731
        return [Functional(count, collective, exchanged_check(ctx, count // ctx.world_size), count)]

    def static(
        self, ctx: Context, request: CaseRequest, labels: dict[str, str], alloc: Alloc
    ) -> Static:
        n, dtype, group = ctx.world_size, request.dtype, ctx.group
        count = element_count(request.requested_bytes, dtype, self.count_multiple(n, dtype))
        source = alloc(count, dtype)
        result = source if labels.get("placement") == "in" else alloc(count, dtype)
        run = lambda: dist.all_to_all_single(result, source, group=group)  # noqa: E731
        return Static(source, result, run, exchanged_check(ctx, count // n), count)


def exchanged_check(ctx: Context, chunk: int) -> Check:
    """Chunk s of the output is sender s's chunk for this rank."""

    def check(issue: Collective, dtype: torch.dtype, count: int) -> int:
        me = ctx.rank
        out = issue(checkdata.fill_pattern(count, me, dtype, ctx.device)).split(chunk)
        return sum(
            checkdata.wrong_moved(out[s], s, start=me * chunk) for s in range(ctx.world_size)
        )

    return check
