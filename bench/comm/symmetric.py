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
raises Unsupported, one line naming the reason (and the rank, where one rank failed alone in its
local steps, which every rank agrees on before the collective rendezvous), and the run stops
before its first row (the CLI reports the launch as failed, with that line at the end of the
rank's log). Where NCCL judges
its symmetric kernels unfit for a call it runs its regular ones on the same buffers, silently;
`NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING` logs `[Symmetric]` on the calls that used them.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist

from distbench.comm.static import build_static, case_labels, check_static
from distbench.primitives.base import Case, CaseRequest, Context
from distbench.primitives.forms import Alloc
from distbench.ranks import agreed_failure
from distbench.timing import barrier

PROBE_ELEMENTS = 1024


class Unsupported(RuntimeError):
    """--buffers symmetric cannot run here; the message is one line saying why."""


FAILURES = (ImportError, RuntimeError, TypeError, ValueError)
"""What torch raises where symmetric memory cannot work here."""


def allocator(ctx: Context) -> Alloc:
    """Zeroed symmetric buffers, each registered on the rank's group."""

    def alloc(count: int, dtype: torch.dtype) -> torch.Tensor:
        tensor = symm_empty(ctx, count, dtype)
        register(ctx, tensor)
        return tensor.zero_()

    return alloc


def symm_empty(ctx: Context, count: int, dtype: torch.dtype) -> torch.Tensor:
    """A symmetric buffer of this rank (local: no other rank takes part)."""
    import torch.distributed._symmetric_memory as symm_mem

    return symm_mem.empty(count, dtype=dtype, device=ctx.device)


def register(ctx: Context, tensor: torch.Tensor) -> None:
    """rendezvous: a collective of the group, every rank with its buffer of the same size."""
    import torch.distributed._symmetric_memory as symm_mem

    group: Any = ctx.group if ctx.group is not None else dist.group.WORLD
    symm_mem.rendezvous(tensor, group)


def probe(ctx: Context) -> None:
    """Select NCCL's symmetric memory and register one small buffer on the group; Unsupported,
    with the reason, where that fails. The local steps (backend, allocation) are agreed on
    before the collective rendezvous, so a rank that fails alone stops every rank at once
    instead of leaving the others in rendezvous until --timeout."""
    nccl = ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else "-"
    where = f"torch {torch.__version__}, NCCL {nccl}"
    error: str | None = None
    try:
        import torch.distributed._symmetric_memory as symm_mem

        if symm_mem.get_backend(ctx.device) != "NCCL":
            symm_mem.set_backend("NCCL")
        tensor = symm_empty(ctx, PROBE_ELEMENTS, torch.float32)
    except FAILURES as failure:
        error = first_line(failure)
    failed = agreed_failure(ctx, error)
    if failed is None:
        try:
            barrier(ctx)  # rendezvous fails as the communicator's first NCCL call (pytorch #188567)
            register(ctx, tensor)
        except FAILURES as failure:
            failed = first_line(failure)
    if failed is not None:
        raise Unsupported(
            f"--buffers symmetric is not supported here ({where}): {failed}; "
            "measure with --buffers regular"
        )


def first_line(error: BaseException) -> str:
    """An error's first line, or its type's name where it says nothing."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


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
