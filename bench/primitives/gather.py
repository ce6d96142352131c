"""gather: every rank sends count/n elements to --root, which ends with all n chunks in rank
order (torch.distributed.gather).

size_bytes is the root's whole gathered buffer (per-rank bytes x n), as nccl-tests' gather
(src/gather.cu: each rank sends count/nranks elements, the root receives count/nranks x nranks;
its size column and algbw are that buffer's). Sizes round down to n whole elements per rank
(count/nranks, no 16-byte alignment, unlike nccl-tests' all_gather). busbw factor (n-1)/n
(GatherGetBw). `--root all` gives one case per root, all sharing the buffers.

torch's gather takes a list of n tensors on the root (here the n chunks of one gathered buffer,
chunk r for rank r) and none elsewhere. Only the root's result is defined, so only it is
checked: chunk r must hold rank r's data; the root's buffer starts from the sentinel, so a chunk
that never arrived stands out. c10d only: torch has no functional gather (its facts claim no
other form, so the CLI refuses --api functional or compiled in one line).
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from distbench.primitives import checkdata
from distbench.primitives.base import Case, CaseRequest, Context, Rooted, element_count
from distbench.primitives.facts import root_ranks


class Gather(Rooted):
    name = "gather"

    def build_cases(self, ctx: Context, request: CaseRequest) -> list[Case]:
        n, dtype = ctx.world_size, request.dtype
        count = element_count(request.requested_bytes, dtype, self.count_multiple(n, dtype))
        send = torch.zeros(count // n, dtype=dtype, device=ctx.device)  # [count / n]
        gathered = torch.zeros(count, dtype=dtype, device=ctx.device)  # the root's [n chunks]
        roots = root_ranks(request.root, n)
        return [self._case(ctx, send, gathered, dst) for dst in roots]

    def _case(self, ctx: Context, send: torch.Tensor, gathered: torch.Tensor, dst: int) -> Case:
        global_dst, per_rank, n = ctx.global_ranks[dst], len(send), ctx.world_size
        is_root = ctx.rank == dst
        chunks = split(gathered, n) if is_root else None

        def run() -> None:
            dist.gather(send, gather_list=chunks, dst=global_dst, group=ctx.group)

        def check() -> int:
            data = checkdata.fill_pattern(per_rank, ctx.rank, send.dtype, ctx.device)
            result = checkdata.fill_sentinel(per_rank * n, send.dtype, ctx.device)
            into = split(result, n) if is_root else None
            dist.gather(data, gather_list=into, dst=global_dst, group=ctx.group)
            if not is_root:
                return 0  # torch defines the gathered data on the root only
            return sum(checkdata.wrong_moved(chunk, r) for r, chunk in enumerate(into or []))

        return Case(
            size_bytes=per_rank * n * send.dtype.itemsize,
            count=per_rank * n,
            run=run,
            check=check,
            labels={"root": str(dst)},
        )


def split(buffer: torch.Tensor, n: int) -> list[torch.Tensor]:
    """The n equal chunks of `buffer`, views (empty ones at a size too small for n elements)."""
    per_rank = len(buffer) // n
    return [buffer[r * per_rank : (r + 1) * per_rank] for r in range(n)]
