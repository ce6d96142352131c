"""What every primitive provides: one signature, so adding one is its facts (facts.py), a new
file and a registry line.

A primitive builds Cases: prepared buffers plus `run()`, the operation the timer repeats, and
`check()`, an untimed bit-exact verification. Its file carries every way of issuing it that its
facts claim (forms.py): c10d (build_cases), functional, static buffers and async; the drivers
(comm/api_cases.py, static.py, symmetric.py, graph.py, overlap/ops.py) call these and know no
primitive by name. Primitives never write files and never time anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import torch
import torch.distributed as dist

from distbench.primitives.facts import FACTS, PrimitiveFacts, placements, root_ranks

if TYPE_CHECKING:
    from distbench.primitives.forms import Alloc, AsyncCollective, Functional, Static

Operations = tuple[Callable[[], None], Callable[[], int]]
"""A case's `run` and `check` (Case)."""

REDUCE_OPS = {
    "sum": dist.ReduceOp.SUM,
    "prod": dist.ReduceOp.PRODUCT,
    "max": dist.ReduceOp.MAX,
    "min": dist.ReduceOp.MIN,
    "avg": dist.ReduceOp.AVG,
}


@dataclass(frozen=True)
class Context:
    """The process group a primitive runs on, as one rank sees it."""

    rank: int
    """This process's rank within `group`."""
    world_size: int
    """Ranks in `group`."""
    device: torch.device
    backend: str
    group: Any = None
    """The ProcessGroup (None: the default world group)."""
    global_ranks: tuple[int, ...] = ()

    @property
    def local_device_ids(self) -> list[int] | None:
        """For NCCL barriers: the GPU this rank drives."""
        return [self.device.index or 0] if self.device.type == "cuda" else None


@dataclass(frozen=True)
class CaseRequest:
    """What one size of the sweep asks a primitive for (build_cases' one argument)."""

    requested_bytes: int
    """The size asked for (nccl-tests' convention per primitive; gather types round it down)."""
    dtype: torch.dtype
    op: str = "sum"
    """The reduction, for primitives that reduce."""
    root: str = "0"
    """broadcast's and reduce's root rank, or 'all' to rotate it."""
    options: dict[str, Any] = field(default_factory=dict)
    """CommSpec.options: send/recv patterns, pairs, window."""
    api: str = "c10d"
    """--api: c10d (the primitive's build_cases), functional or compiled:BACKEND (built by
    comm/api_cases.py)."""


@dataclass
class Case:
    """One prepared measurement: buffers allocated, nothing timed yet."""

    size_bytes: int
    """nccl-tests' size for this primitive (see METHOD: per rank, or the whole gathered buffer)."""
    count: int
    """Elements in size_bytes."""
    run: Callable[[], None]
    """One operation. On CUDA it only enqueues; the timer drains."""
    check: Callable[[], int]
    """Re-fill with check data, run once, return wrong elements on this rank."""
    labels: dict[str, str] = field(default_factory=dict)
    """Extra row columns: root, src, dst, pattern."""
    ops_per_run: int = 1
    """Messages one run() completes: a timed sample is divided by it, so time_us is per message
    (ping-pong: 2, one-way latency = round trip / 2; a window of W sends: W, as osu_bw)."""
    bw_bytes: int = 0
    """The bytes algbw divides by the time, where not size_bytes (alltoallv: the busiest rank's
    sent or received bytes); 0: size_bytes."""
    busbw_factor: float | None = None
    """This case's busbw factor, where it is not the primitive's (alltoallv: per split)."""
    columns: dict[str, float] = field(default_factory=dict)
    """Extra numeric row columns (alltoallv: send/recv bytes min/max over ranks, imbalance)."""


class Primitive(Protocol):
    name: str
    """torch's name, used in the primitive column."""

    @property
    def reduces(self) -> bool:
        """Whether --op applies."""
        ...

    def busbw_factor(self, world_size: int) -> float: ...

    def case_count(self, world_size: int, root: str, options: dict[str, Any]) -> int:
        """Cases build_cases returns per size (several when rotating a root or walking pairs)."""
        ...

    def count_multiple(self, world_size: int, dtype: torch.dtype) -> int:
        """Elements must come in multiples of this (gather-type primitives: n whole 16-byte
        chunks, as nccl-tests)."""
        ...

    def build_cases(self, ctx: Context, request: CaseRequest) -> list[Case]:
        """The cases of one size of the sweep."""
        ...

    def case_labels(self, request: CaseRequest, world_size: int) -> list[dict[str, str]]:
        """The labels of build_cases' cases, in their order (the static forms build each)."""
        ...

    def functional(
        self, ctx: Context, request: CaseRequest, count: int, group: Any
    ) -> list[Functional]:
        """The functional form's cases of one size (facts.functional), `count` elements as the
        c10d case's, on `group` (a ProcessGroup, never None)."""
        ...

    def static(
        self, ctx: Context, request: CaseRequest, labels: dict[str, str], alloc: Alloc
    ) -> Static:
        """The c10d op of the case with these labels on buffers from `alloc` (facts.graph)."""
        ...

    def overlapped(self, ctx: Context, request: CaseRequest) -> AsyncCollective:
        """The c10d op issued async_op=True, with its check (facts.overlap)."""
        ...


def collective(name: str, old_name: str) -> Callable[..., Any]:
    """torch.distributed's collective `name`, or `old_name` in a torch from before the rename
    (torch 2.13 renamed the *_tensor collectives *_single and deprecates the old names)."""
    function: Callable[..., Any] = getattr(dist, name, None) or getattr(dist, old_name)
    return function


def element_count(requested_bytes: int, dtype: torch.dtype, multiple: int = 1) -> int:
    """Whole elements in requested_bytes, rounded down to a multiple of `multiple` (for
    gather-type primitives: count_multiple, so every rank gets the same whole chunk)."""
    count = requested_bytes // dtype.itemsize
    return count - count % multiple


class PrimitiveBase:
    """The Protocol's methods, from the primitive's facts (facts.py, shared with the CLI's
    planning): a primitive subclasses this (or GatherType) and adds build_cases, plus the forms
    its facts claim (functional, static, overlapped)."""

    name: str = ""

    @property
    def facts(self) -> PrimitiveFacts:
        return FACTS[self.name]

    @property
    def reduces(self) -> bool:
        return self.facts.reduces

    def busbw_factor(self, world_size: int) -> float:
        return self.facts.busbw_factor(world_size)

    def case_count(self, world_size: int, root: str, options: dict[str, Any]) -> int:
        return self.facts.case_count(world_size, root, options)

    def count_multiple(self, world_size: int, dtype: torch.dtype) -> int:
        return self.facts.count_multiple(world_size, dtype.itemsize)

    def case_labels(self, request: CaseRequest, world_size: int) -> list[dict[str, str]]:
        """One per root (rooted), per placement (placeable), or one."""
        if self.facts.rooted:
            return [{"root": str(root)} for root in root_ranks(request.root, world_size)]
        if self.facts.placeable:
            return [{"placement": placement} for placement in placements(request.options)]
        return [{}]

    def functional(
        self, ctx: Context, request: CaseRequest, count: int, group: Any
    ) -> list[Functional]:
        raise NotImplementedError(f"{self.name} has no functional form")  # the CLI refused it

    def static(
        self, ctx: Context, request: CaseRequest, labels: dict[str, str], alloc: Alloc
    ) -> Static:
        raise NotImplementedError(f"no static form of {self.name}")  # the CLI refused it

    def overlapped(self, ctx: Context, request: CaseRequest) -> AsyncCollective:
        raise NotImplementedError(f"{self.name} is not overlapped")  # the CLI refused it


class GatherType(PrimitiveBase):
    """all_gather, reduce_scatter, all_to_all: every rank holds one chunk (busbw factor (n - 1) / n,
    nccl-tests, in their facts).

    Chunks are rounded as nccl-tests 2.19.6 rounds them (src/all_gather.cu, reduce_scatter.cu,
    alltoall.cu): `(count / n) & ~(16 / element_size - 1)` elements, whole and 16-byte aligned.
    That is count rounded down to a multiple of n * 16 / element_size, i.e. the size in bytes
    rounded down to a multiple of 16 n, whatever the dtype.

    They are the placeable ones: build_cases gives one case per placement (out, in: --placement)
    from the primitive's `prepare`, labelled with it (and, where the backend emulates the
    primitive, with the pattern facts.py names)."""

    def build_cases(self, ctx: Context, request: CaseRequest) -> list[Case]:
        dtype = request.dtype
        count = element_count(
            request.requested_bytes, dtype, self.count_multiple(ctx.world_size, dtype)
        )
        emulated = self.facts.emulated
        pattern = {"pattern": emulated[ctx.backend]} if ctx.backend in emulated else {}
        cases = []
        for placement in placements(request.options):
            run, check = self.prepare(ctx, request, count, placement == "in")
            labels = {**pattern, "placement": placement}
            cases.append(Case(count * dtype.itemsize, count, run, check, labels))
        return cases

    def prepare(self, ctx: Context, request: CaseRequest, count: int, in_place: bool) -> Operations:
        """`run` and `check` of one case of `count` elements (the whole buffer of n chunks), in
        place or out of place."""
        raise NotImplementedError


class Rooted(PrimitiveBase):
    """broadcast, reduce, gather: one case per root (`--root all` rotates it)."""
