"""all_to_all: every rank splits its buffer into n chunks and sends chunk j to rank j.

size_bytes is one rank's whole send buffer (per-peer bytes x n), rounded down so every chunk is
whole and 16-byte aligned, as nccl-tests does (GatherType); busbw factor (n-1)/n (nccl-tests,
src/alltoall.cu). Tensor API: all_to_all_single with equal splits.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from distbench.primitives import checkdata
from distbench.primitives.base import CaseRequest, Context, GatherType, Operations


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
