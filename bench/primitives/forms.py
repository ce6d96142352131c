"""The ways of issuing a primitive besides its c10d cases, as each primitive's own file builds
them for the drivers that know no primitive by name:

- functional (comm/api_cases.py): `Functional`, a tensor-in, tensor-out call (torch's
  functional collective, waited on) and its `Check`;
- static buffers (comm/static.py, for CUDA graphs and symmetric memory): `Static`, the c10d op on
  buffers the caller allocates (`Alloc`), checked by the same `Check`;
- async (overlap/ops.py): `AsyncCollective`, the c10d op issued async_op=True and its check.

A `Check` is shared by every tensor-in, tensor-out form: it feeds the check data through `issue`
(the functional call, or a copy into static buffers, the op and the output buffer) and counts
the wrong elements of what comes back, with the same data, counts and comparison as the
primitive's c10d check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from distbench.primitives import checkdata
from distbench.primitives.base import Context

FUNCOL_OPS = {"sum": "sum", "prod": "product", "max": "max", "min": "min", "avg": "avg"}
"""--op -> the reduceOp string of torch's functional collectives."""
Collective = Callable[[torch.Tensor], torch.Tensor]
"""A tensor-in, tensor-out issue of the collective."""
Check = Callable[[Collective, torch.dtype, int], int]
"""(the issuing call, dtype, input elements) -> wrong elements on this rank."""
Alloc = Callable[[int, torch.dtype], torch.Tensor]
"""(elements, dtype) -> a zeroed 1-D tensor on the rank's device."""


@dataclass(frozen=True)
class Functional:
    """One case of the functional form: the call on an input of `inputs` elements, its check."""

    count: int
    """Elements of the row's size_bytes (the c10d case's)."""
    collective: Collective
    """The functional collective on its input (comm/api_cases.py waits on it)."""
    check: Check
    inputs: int
    """Elements of the input."""
    labels: dict[str, str] = field(default_factory=dict)
    bw_bytes: int = 0
    """As Case's (alltoallv: the busiest rank's bytes)."""
    busbw_factor: float | None = None
    columns: dict[str, float] = field(default_factory=dict)
    """As Case's: the primitive's extra columns."""


@dataclass(frozen=True)
class Static:
    """A collective's buffers, the op on them and its check."""

    source: torch.Tensor
    """What the op sends (check data is copied here)."""
    result: torch.Tensor
    """What the op writes (the check reads it); a view of `source` in place."""
    run: Callable[[], None]
    check: Check
    count: int
    """Elements of the row's size_bytes (the c10d case's)."""


@dataclass(frozen=True)
class AsyncCollective:
    """One collective on prepared buffers, issued async_op=True (`distbench overlap`)."""

    size_bytes: int
    """nccl-tests' size: one rank's buffer (all_reduce, broadcast), the gathered one (all_gather,
    reduce_scatter)."""
    count: int
    issue: Callable[[], Any]
    """Issue it on the timed buffers; returns the Work."""
    issue_check: Callable[[], tuple[Any, Callable[[], int]]]
    """Fill the check data, issue it on them; returns (Work, count of wrong elements on this
    rank, to call after the wait)."""


def reduced_check(ctx: Context, op: str, start: int) -> Check:
    """A reduction's output: all_reduce's (start 0), reduce_scatter's (this rank's chunk of the
    reduced input, from `start`)."""

    def check(issue: Collective, dtype: torch.dtype, count: int) -> int:
        data = checkdata.fill(count, ctx.rank, ctx.world_size, dtype, ctx.device, op)
        return checkdata.wrong_reduced(issue(data), ctx.world_size, op, start=start)

    return check


def root_of(ctx: Context, rank: int) -> int:
    """The global rank of the group's rank `rank` (c10d's src/dst)."""
    return ctx.global_ranks[rank] if ctx.global_ranks else rank
