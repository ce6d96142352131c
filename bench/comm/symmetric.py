"""--buffers symmetric on the ranks: the timed buffers in symmetric memory.

    distbench allreduce --backend nccl --buffers symmetric --check

torch.distributed._symmetric_memory with its NCCL backend (set once per process, before the
first symmetric allocation): every buffer of a case is `symm_mem.empty`, then
`symm_mem.rendezvous(buffer, group)`, which registers it with NCCL as a symmetric window; c10d's
all_reduce, all_gather and reduce_scatter on such buffers are eligible for NCCL's symmetric
kernels (NCCL 2.27+, every rank one NVLink hop from the others). Every rank allocates the same
sizes in the same order, as rendezvous (a collective) requires. The cases are comm/static.py's:
the c10d cases' sizes and in-place forms, checked with the same data and comparison.

Where torch, NCCL or the GPUs cannot do it (a torch without NCCL symmetric memory, NCCL too old,
no peer access between the GPUs ...), `probe` finds out before anything is measured: each rank
raises Unsupported, one line naming the reason, and the run stops before its first row (the CLI
reports the launch as failed, with that line at the end of the rank's log). Where NCCL judges
its symmetric kernels unfit for a call it runs its regular ones on the same buffers, silently;
`NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING` logs `[Symmetric]` on the calls that used them.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist

from distbench.comm.static import Alloc, build_static, case_labels, check_static
from distbench.primitives.base import Case, CaseRequest, Context
from distbench.timing import barrier

PROBE_ELEMENTS = 1024


class Unsupported(RuntimeError):
    """--buffers symmetric cannot run here; the message is one line saying why."""


def allocator(ctx: Context) -> Alloc:
    """Zeroed symmetric buffers, each registered on the rank's group."""
    import torch.distributed._symmetric_memory as symm_mem

    group: Any = ctx.group if ctx.group is not None else dist.group.WORLD

    def alloc(count: int, dtype: torch.dtype) -> torch.Tensor:
        tensor = symm_mem.empty(count, dtype=dtype, device=ctx.device)
        symm_mem.rendezvous(tensor, group)
        return tensor.zero_()

    return alloc


def probe(ctx: Context) -> None:
    """Select NCCL's symmetric memory and register one small buffer on the group; Unsupported,
    with the reason, where that fails."""
    nccl = ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else "-"
    where = f"torch {torch.__version__}, NCCL {nccl}"
    try:
        import torch.distributed._symmetric_memory as symm_mem

        if symm_mem.get_backend(ctx.device) != "NCCL":
            symm_mem.set_backend("NCCL")
        barrier(ctx)  # rendezvous fails as the communicator's first NCCL call (pytorch #188567)
        allocator(ctx)(PROBE_ELEMENTS, torch.float32)
    except (ImportError, RuntimeError, TypeError, ValueError) as error:
        text = str(error).strip()
        reason = text.splitlines()[0] if text else type(error).__name__
        raise Unsupported(
            f"--buffers symmetric is not supported here ({where}): {reason}; "
            "measure with --buffers regular"
        ) from None


def build_cases(ctx: Context, primitive: str, request: CaseRequest) -> list[Case]:
    """The c10d cases of one size, on symmetric buffers."""
    alloc = allocator(ctx)
    cases = []
    for labels in case_labels(primitive, request, ctx.world_size):
        static = build_static(ctx, primitive, request, labels, alloc)
        cases.append(
            Case(
                size_bytes=static.count * request.dtype.itemsize,
                count=static.count,
                run=static.run,
                check=lambda static=static: check_static(static),
                labels=labels,
            )
        )
    return cases
