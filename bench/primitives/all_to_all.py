"""all_to_all: every rank splits its buffer into n chunks and sends chunk j to rank j.

size_bytes is one rank's whole send buffer (per-peer bytes x n), rounded down so every chunk holds
whole elements; busbw factor (n-1)/n (nccl-tests, src/alltoall.cu). Tensor API:
all_to_all_single with equal splits.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist

from distbench.primitives import checkdata
from distbench.primitives.base import Case, Context, GatherType, element_count


class AllToAll(GatherType):
    name = "all_to_all"

    def build_cases(
        self,
        ctx: Context,
        requested_bytes: int,
        dtype: torch.dtype,
        op: str,
        root: str,
        options: dict[str, Any] | None = None,
    ) -> list[Case]:
        n = ctx.world_size
        count = element_count(requested_bytes, dtype, multiple=n)
        chunk = count // n
        send = torch.zeros(count, dtype=dtype, device=ctx.device)  # [n chunks of count / n]
        received = torch.zeros(count, dtype=dtype, device=ctx.device)  # [n chunks of count / n]

        def run() -> None:
            dist.all_to_all_single(received, send, group=ctx.group)

        def check() -> int:
            # Chunk j of rank r holds (i + r * n + j) % K: each (sender, receiver) pair differs.
            me = ctx.rank
            data = torch.cat(
                [checkdata.fill_pattern(chunk, me * n + j, dtype, ctx.device) for j in range(n)]
            )
            out = torch.zeros(count, dtype=dtype, device=ctx.device)
            dist.all_to_all_single(out, data, group=ctx.group)
            expected = torch.cat(
                [checkdata.expected_pattern(chunk, j * n + me, dtype, ctx.device) for j in range(n)]
            )
            return checkdata.count_wrong(out, expected)

        return [Case(size_bytes=count * dtype.itemsize, count=count, run=run, check=check)]
