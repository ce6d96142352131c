"""One c10d collective on buffers allocated by the caller and kept (CUDA graphs' "static" inputs
and outputs): comm/symmetric.py allocates them in symmetric memory and times the op on them;
comm/graph.py captures the op on them for --check. The sizes, rounding and in-place forms are the
c10d cases' and each primitive builds its own (its `static`, primitives/forms.py's Static); the
checks are its functional form's: the same check data and counts as the c10d primitive's own
check, fed through `issue`, which copies the data in, runs the op (eagerly, or by replaying a
captured graph) and returns the output buffer. The ops go through the names the c10d primitives
call (dist.*, all_gather.ALL_GATHER ...), looked up at each call, so the mutation suite's
corruptions (tests/mutation/corrupt.py) reach them too. This driver knows no primitive by
name.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from distbench.primitives import checkdata, get_primitive
from distbench.primitives.base import CaseRequest, Context
from distbench.primitives.forms import Alloc, Collective, Static


def regular_buffers(ctx: Context) -> Alloc:
    """Zeroed buffers from torch's default allocator (comm/symmetric.py has the other one)."""
    return lambda count, dtype: torch.zeros(count, dtype=dtype, device=ctx.device)


def case_labels(primitive: str, request: CaseRequest, world_size: int) -> list[dict[str, str]]:
    """The labels of the c10d cases of one size, in their order: one per root, per placement or
    one; build_static builds the buffers of each."""
    return get_primitive(primitive).case_labels(request, world_size)


def build_static(
    ctx: Context, primitive: str, request: CaseRequest, labels: dict[str, str], alloc: Alloc
) -> Static:
    """The buffers of the c10d case with these labels, from `alloc`; the same op on them (the
    primitive's `static`)."""
    return get_primitive(primitive).static(ctx, request, labels, alloc)


def issue_with(static: Static, execute: Callable[[], None]) -> Collective:
    """The check's issuing call: the result buffer reset to the sentinel (so an element the op
    leaves unwritten is wrong), the check data copied into the source, `execute()`, the result."""

    def issue(data: torch.Tensor) -> torch.Tensor:
        static.result.fill_(checkdata.sentinel(data.dtype))
        static.source.copy_(data)
        execute()
        return static.result

    return issue


def check_static(static: Static, execute: Callable[[], None] | None = None) -> int:
    """Wrong elements on this rank after the op ran on the check data: eagerly, or by
    `execute()` (comm/graph.py: a replay of the op captured on these buffers)."""
    issue = issue_with(static, execute or static.run)
    return static.check(issue, static.source.dtype, static.source.numel())
