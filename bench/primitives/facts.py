"""What each primitive is, without torch: its command, whether --op and --root apply, how many
cases one size makes, how sizes round, which backends emulate it. The CLI process plans and
validates with these facts; the rank side's classes (registry.py) read the same ones."""

from __future__ import annotations

from collections.abc import Mapping
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


@dataclass(frozen=True)
class PrimitiveFacts:
    """One primitive as the CLI and the planner see it."""

    name: str
    """torch's name, used in the primitive column."""
    command: str
    """The `distbench` command that measures it."""
    reduces: bool = False
    """Whether --op applies."""
    rooted: bool = False
    """Whether --root applies (one case per root; `--root all` rotates it)."""
    gather_type: bool = False
    """Every rank holds one chunk: sizes round down to n whole 16-byte chunks (nccl-tests)."""
    point_to_point: bool = False
    """Cases per size come from --pattern and --pairs."""
    emulated: Mapping[str, str] = field(default_factory=dict)
    """Backend -> pattern label, where that backend runs another collective in disguise."""
    placeable: bool = False
    """--placement applies: one case per placement (out, in)."""

    def case_count(self, world_size: int, root: str, options: Mapping[str, Any]) -> int:
        """Cases one size makes (several when rotating a root or walking pairs)."""
        if self.rooted:
            return len(root_ranks(root, world_size))
        if self.point_to_point:
            return len(pattern_cases(world_size, options))
        if self.placeable:
            return len(placements(options))
        return 1

    def count_multiple(self, world_size: int, itemsize: int) -> int:
        """Elements must come in multiples of this (gather-type primitives: n whole 16-byte
        chunks, as nccl-tests)."""
        if self.gather_type:
            return world_size * max(1, CHUNK_ALIGN_BYTES // itemsize)
        return 1


FACTS: dict[str, PrimitiveFacts] = {
    facts.name: facts
    for facts in (
        PrimitiveFacts("all_reduce", "allreduce", reduces=True),
        PrimitiveFacts("broadcast", "broadcast", rooted=True),
        PrimitiveFacts("reduce", "reduce", reduces=True, rooted=True),
        PrimitiveFacts("all_gather", "allgather", gather_type=True, placeable=True),
        PrimitiveFacts(
            "reduce_scatter",
            "reducescatter",
            reduces=True,
            gather_type=True,
            emulated={"gloo": "via_all_reduce"},
            placeable=True,
        ),
        PrimitiveFacts("all_to_all", "alltoall", gather_type=True, placeable=True),
        PrimitiveFacts("send_recv", "sendrecv", point_to_point=True),
        PrimitiveFacts("all_to_allv", "alltoallv"),
    )
}
"""Primitive name -> its facts, in the order `all` measures them."""

COMMANDS: dict[str, str] = {facts.command: name for name, facts in FACTS.items()}
"""CLI command name -> primitive name."""

ROOTED = tuple(name for name, facts in FACTS.items() if facts.rooted)
"""Primitives that take --root."""
PLACEABLE = tuple(name for name, facts in FACTS.items() if facts.placeable)
"""Primitives that take --placement."""
