"""The cases of one size under --api (comm/api.py says what each api is): c10d's are the
primitive's own; functional and compiled ones time `wait_tensor(<functional collective>(input))`
eagerly or through torch.compile, out of place as that API is, and check the output it returns
with the same check data and counts as the c10d primitive. Each primitive's file builds its
functional form (`functional`: the call, its check, its labels and columns); this driver knows
no primitive by name.

A compiled case compiles when it is built: the compiled function's first call (which also runs
the collective once, on every rank) is timed and kept as the row's compile_s (rank 0's seconds),
so neither the warm-up nor the timed trials include compilation. dynamic=False compiles one graph
per size, fullgraph=True refuses a graph break, and the recompile limit is raised so that a sweep
of many sizes never falls back to eager in silence.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from distbench.comm.api import compile_backend
from distbench.primitives import get_primitive
from distbench.primitives.base import Case, CaseRequest, Context, element_count
from distbench.primitives.forms import Functional

RECOMPILE_LIMIT = 4096
"""torch._dynamo's recompile limit while distbench compiles (default 8: one graph per size)."""


def build_cases(ctx: Context, primitive: str, request: CaseRequest) -> list[Case]:
    """The cases of one size for request.api (c10d: the primitive's own build_cases)."""
    prim = get_primitive(primitive)
    if request.api == "c10d":
        return prim.build_cases(ctx, request)
    group: Any = ctx.group if ctx.group is not None else dist.group.WORLD
    multiple = prim.count_multiple(ctx.world_size, request.dtype)
    count = element_count(request.requested_bytes, request.dtype, multiple)
    return [finish(ctx, request, form) for form in prim.functional(ctx, request, count, group)]


def finish(ctx: Context, request: CaseRequest, form: Functional) -> Case:
    """One case of form.count elements (size_bytes as c10d's), its input of form.inputs
    elements, the (compiled) call and its check; compiled here if asked."""
    import torch.distributed._functional_collectives as funcol  # not c10d's: ~0.15 CPU-s

    dtype = request.dtype
    source = torch.zeros(form.inputs, dtype=dtype, device=ctx.device)

    def call(tensor: torch.Tensor) -> torch.Tensor:
        return funcol.wait_tensor(form.collective(tensor))

    issue: Callable[[torch.Tensor], Any] = call
    compile_s = math.nan
    backend = compile_backend(request.api)
    if backend:
        torch._dynamo.config.recompile_limit = max(
            RECOMPILE_LIMIT, torch._dynamo.config.recompile_limit
        )
        issue = torch.compile(call, backend=backend, fullgraph=True, dynamic=False)
        begin = time.perf_counter()
        issue(source)  # compiles, and runs the collective once on every rank
        compile_s = time.perf_counter() - begin

    def run() -> None:
        issue(source)

    compiled = {} if math.isnan(compile_s) else {"compile_s": f"{compile_s:.6f}"}
    return Case(
        size_bytes=form.count * dtype.itemsize,
        count=form.count,
        run=run,
        check=lambda: form.check(issue, dtype, form.inputs),
        labels={**form.labels, **compiled},
        bw_bytes=form.bw_bytes,
        busbw_factor=form.busbw_factor,
        columns=form.columns,
    )
