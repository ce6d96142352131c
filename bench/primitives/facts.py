"""What each primitive is, without torch, as nccl-tests' `testColl` describes a collective: its
command, --help summary and examples, whether --op and --root apply, how many cases one size
makes, how sizes round, its busbw factor, which backends emulate it, and every way distbench can
issue it besides c10d (functional and compiled, CUDA graphs, symmetric memory, overlap) and the
name NCCL logs it under. The CLI process plans and validates with these facts; the rank side's
classes (registry.py) read the same ones. A primitive is one entry here, its own file (every way
of issuing it) and a line in registry.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

CHUNK_ALIGN_BYTES = 16
"""nccl-tests' alignment of a gather-type primitive's per-rank chunk."""

PATTERNS = ("pingpong", "window", "ring", "multipair")
"""send/recv's ways of measuring (the `pattern` column)."""
WHOLE_GROUP_PATTERNS = ("ring", "multipair")
"""Patterns that use every rank at once (one case per size; --pairs does not apply)."""
DEFAULT_PATTERNS = ("pingpong", "window")
PLACEMENTS = ("out", "in")
"""--placement: out of place (separate input and output buffers) and in place (nccl-tests'
in-place form: all_gather's input is this rank's chunk of the output, reduce_scatter's output is
this rank's chunk of the input, all_to_all's input and output are one buffer)."""
SKEWS = ("uniform", "zipf", "hot")
"""alltoallv --skew kinds: uniform, zipf:S, hot:FRACTION."""


def placements(options: Mapping[str, Any]) -> list[str]:
    """The placements a placeable primitive measures, in nccl-tests' order (out, then in)."""
    given = options.get("placements") or ["out"]
    return [p for p in PLACEMENTS if p in given]


def root_ranks(root: str, world_size: int) -> list[int]:
    """'all' -> every rank in turn; '2' -> [2]. The CLI has already checked the value."""
    return list(range(world_size)) if root == "all" else [int(root)]


def resolve_pairs(pairs: Any, world_size: int) -> list[tuple[int, int]]:
    """'all' -> every ordered pair (n(n-1) of them); otherwise the [src, dst] pairs given."""
    if pairs == "all":
        return [(a, b) for a in range(world_size) for b in range(world_size) if a != b]
    return [(int(a), int(b)) for a, b in (pairs or [(0, 1)])]


def pattern_cases(world_size: int, options: Mapping[str, Any]) -> list[tuple[str, int, int]]:
    """(pattern, src, dst) of each send/recv case of one size, in measuring order; ring and
    multipair (every rank at once): src = dst = -1. multipair pairs rank i with i + n/2, so an
    odd world size has none (the CLI refuses a run left with nothing and notes the skip)."""
    cases: list[tuple[str, int, int]] = []
    for pattern in options.get("patterns", DEFAULT_PATTERNS):
        if pattern == "multipair" and world_size % 2:
            continue
        if pattern in WHOLE_GROUP_PATTERNS:
            cases.append((pattern, -1, -1))
        else:
            cases += [(pattern, a, b) for a, b in resolve_pairs(options.get("pairs"), world_size)]
    return cases


BUSBW_FACTORS: dict[str, Callable[[int], float]] = {
    "1": lambda n: 1.0,
    "(n-1)/n": lambda n: (n - 1) / n,
    "2(n-1)/n": lambda n: 2 * (n - 1) / n,
}
"""busbw = algbw x factor, nccl-tests' convention (docs/measurement.md), by the formula's name."""


@dataclass(frozen=True)
class Symmetric:
    """What NCCL's symmetric kernels serve of a primitive (--buffers symmetric); empty: any."""

    ops: tuple[str, ...] = ()
    """The --op values they reduce with (reducing primitives)."""
    dtypes: tuple[str, ...] = ()
    """The --dtype values they take."""


@dataclass(frozen=True)
class PrimitiveFacts:
    """One primitive as the CLI and the planner see it."""

    name: str
    """torch's name, used in the primitive column."""
    command: str
    """The `distbench` command that measures it."""
    summary: str = ""
    """Its command's --help line."""
    examples: str = ""
    """Its command's --help examples, one command a line."""
    busbw: str = "1"
    """busbw factor, a key of BUSBW_FACTORS (alltoallv: uniform splits'; each case has its own)."""
    reduces: bool = False
    """Whether --op applies."""
    rooted: bool = False
    """Whether --root applies (one case per root; `--root all` rotates it)."""
    gather_type: bool = False
    """Every rank holds one chunk: sizes round down to n whole 16-byte chunks (nccl-tests)."""
    whole_chunks: bool = False
    """Every rank holds one chunk, not aligned: sizes round down to n whole elements (nccl-tests'
    gather)."""
    point_to_point: bool = False
    """Cases per size come from --pattern and --pairs."""
    emulated: Mapping[str, str] = field(default_factory=dict)
    """Backend -> pattern label, where that backend runs another collective in disguise."""
    placeable: bool = False
    """--placement applies: one case per placement (out, in)."""
    functional: bool = False
    """torch has a functional collective for it: --api functional and compiled issue it."""
    graph: bool = False
    """--cuda-graph captures it (its --check replays a captured op on static buffers)."""
    symmetric: Symmetric | None = None
    """--buffers symmetric: what NCCL's symmetric kernels serve of it; None: refused."""
    overlap: bool = False
    """`distbench overlap` issues it async_op=True beside compute."""
    nccl_name: str = ""
    """NCCL's name for it in the TUNING line (--nccl-trace); '': NCCL logs no algorithm for it
    (point-to-point in NCCL)."""

    def busbw_factor(self, world_size: int) -> float:
        return BUSBW_FACTORS[self.busbw](world_size)

    def case_count(self, world_size: int, root: str, options: Mapping[str, Any]) -> int:
        """Cases one size makes (several when rotating a root or walking pairs)."""
        if self.rooted:
            return len(root_ranks(root, world_size))
        if self.point_to_point:
            return len(pattern_cases(world_size, options))
        if self.placeable:
            return len(placements(options))
        return 1

    @property
    def rounding(self) -> str:
        """How count_multiple rounds a size, as the CLI's note says it."""
        return "whole 16-byte chunks per rank" if self.gather_type else "whole elements per rank"

    def count_multiple(self, world_size: int, itemsize: int) -> int:
        """Elements must come in multiples of this (gather-type primitives: n whole 16-byte
        chunks, as nccl-tests; gather: n whole elements)."""
        if self.gather_type:
            return world_size * max(1, CHUNK_ALIGN_BYTES // itemsize)
        if self.whole_chunks:
            return world_size
        return 1


REDUCED_BY_NCCL = Symmetric(("sum", "avg"), ("float32", "float16", "bfloat16"))
"""What NCCL's symmetric all_reduce and reduce_scatter reduce."""

FACTS: dict[str, PrimitiveFacts] = {
    facts.name: facts
    for facts in (
        PrimitiveFacts(
            "all_reduce",
            "allreduce",
            "Time all_reduce (busbw = algbw x 2(n-1)/n, nccl-tests' convention).",
            "  distbench allreduce --backend gloo --sizes 1M,64M\n"
            "  distbench allreduce --backend nccl --world-sizes 2,4,8 --dtype bfloat16 --check\n"
            "  distbench allreduce --backend gloo --world-sizes 2,3 --min-size 4 --max-size 1M "
            "--factor 2",
            busbw="2(n-1)/n",
            reduces=True,
            functional=True,
            graph=True,
            symmetric=REDUCED_BY_NCCL,
            overlap=True,
            nccl_name="AllReduce",
        ),
        PrimitiveFacts(
            "broadcast",
            "broadcast",
            "Time broadcast from --root (busbw = algbw, nccl-tests' convention).",
            "  distbench broadcast --backend gloo --sizes 1K,1M --root all --check  # every root "
            "in turn",
            rooted=True,
            functional=True,
            graph=True,
            overlap=True,
            nccl_name="Broadcast",
        ),
        PrimitiveFacts(
            "reduce",
            "reduce",
            "Time reduce to --root (busbw = algbw, nccl-tests' convention).",
            "  distbench reduce --op max --root 1",
            reduces=True,
            rooted=True,
            nccl_name="Reduce",
        ),
        PrimitiveFacts(
            "all_gather",
            "allgather",
            "Time all_gather_into_tensor; size = the whole gathered buffer (busbw = algbw x "
            "(n-1)/n).",
            "  distbench allgather --world-sizes 2,3 --check     # 3 ranks: 1K measures 1008 B",
            busbw="(n-1)/n",
            gather_type=True,
            placeable=True,
            functional=True,
            graph=True,
            symmetric=Symmetric(),
            overlap=True,
            nccl_name="AllGather",
        ),
        PrimitiveFacts(
            "reduce_scatter",
            "reducescatter",
            "Time reduce_scatter_tensor; size = each rank's input (busbw = algbw x (n-1)/n).",
            "  distbench reducescatter --dtype bfloat16 --check",
            busbw="(n-1)/n",
            reduces=True,
            gather_type=True,
            emulated={"gloo": "via_all_reduce"},
            placeable=True,
            functional=True,
            graph=True,
            symmetric=REDUCED_BY_NCCL,
            overlap=True,
            nccl_name="ReduceScatter",
        ),
        PrimitiveFacts(
            "all_to_all",
            "alltoall",
            "Time all_to_all_single; size = each rank's send buffer (busbw = algbw x (n-1)/n).",
            "  distbench alltoall --mode both --sizes 64K,16M",
            busbw="(n-1)/n",
            gather_type=True,
            placeable=True,
            functional=True,
            graph=True,
        ),
        PrimitiveFacts(
            "send_recv",
            "sendrecv",
            "Time point-to-point send/recv: ping-pong latency, windowed bandwidth, ring (busbw = "
            "algbw).",
            "  distbench sendrecv --backend gloo --sizes 8,1K,1M               # pingpong, window: "
            "0->1\n"
            "  distbench sendrecv --pattern pingpong --pairs all --world-sizes 4  # every ordered "
            "pair",
            point_to_point=True,
        ),
        PrimitiveFacts(
            "all_to_allv",
            "alltoallv",
            "Time uneven all_to_all_single (MoE dispatch); algbw on the busiest rank's bytes.",
            "  distbench alltoallv --sizes 1M,16M --skew zipf:1.2 --check     # each rank sends "
            "1M, 16M\n"
            "  distbench alltoallv --tokens 4096 --hidden 256 --experts 8 --topk 2 --skew zipf:1.2",
            busbw="(n-1)/n",
            functional=True,
            graph=True,
        ),
        PrimitiveFacts(
            "gather",
            "gather",
            "Time gather to --root; size = the root's whole gathered buffer (busbw = algbw x "
            "(n-1)/n).",
            "  distbench gather --backend gloo --world-sizes 2,3 --sizes 1K,1M --root all --check"
            "  # every root",
            busbw="(n-1)/n",
            rooted=True,
            whole_chunks=True,
        ),
    )
}
"""Primitive name -> its facts, in the order `all` measures them."""

COMMANDS: dict[str, str] = {facts.command: name for name, facts in FACTS.items()}
"""CLI command name -> primitive name."""

ROOTED = tuple(name for name, facts in FACTS.items() if facts.rooted)
"""Primitives that take --root."""
PLACEABLE = tuple(name for name, facts in FACTS.items() if facts.placeable)
"""Primitives that take --placement."""


def with_flag(flag: str) -> tuple[str, ...]:
    """The primitives whose facts set `flag` (functional, graph, overlap, symmetric ...), in
    FACTS' order."""
    return tuple(name for name, facts in FACTS.items() if getattr(facts, flag))


def emulated_pattern(primitive: str, backend: str) -> str:
    """What `backend` runs in place of `primitive` where it has no such op (a row's pattern:
    gloo's reduce_scatter is `via_all_reduce`); '' where it runs the op itself."""
    facts = FACTS.get(primitive)
    return facts.emulated.get(backend, "") if facts else ""


def emulation_notes(primitives: Sequence[str], backend: str) -> list[str]:
    """A note for each primitive that `backend` runs as another op: those rows time that op."""
    notes = []
    for name in primitives:
        if pattern := emulated_pattern(name, backend):
            notes.append(
                f"note: {backend} has no {name.replace('_', '-')}: torch runs "
                f"{name}_tensor there as an all_reduce of the whole input plus a copy, so those "
                f"rows (pattern {pattern}) time that, not a {name.replace('_', '-')}"
            )
    return notes
