"""What `distbench pairs` measures (PairsSpec, spec.json's workload) and its schedule: the circle
method of round-robin tournaments, so that every pair of n units (ranks or nodes) meets once in
n - 1 rounds (n rounds for odd n, where a dummy unit gives one unit a bye each round), every round
running its disjoint pairs at the same time. Torch-free: the CLI plans with it too."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from distbench.collectors.schema import RANKS_CSV
from distbench.collectors.sink import read_rows
from distbench.parse import DTYPE_BYTES, DTYPES, UsageError
from distbench.spec import Repeats, RunSpec, check_minimums, measurement_index

PAIR_PRIMITIVES = ("send_recv", "all_reduce")
"""What one pair runs: a bidirectional window of send/recv, or an all_reduce on its subgroup."""
LEVELS = ("rank", "node")
DEFAULT_THRESHOLD = 3.5
"""Robust z-score at or below which a rank or node is an outlier (Iglewicz and Hoaglin's 3.5;
pairs/outliers.py says what it measures)."""
EFFECT_FLOOR = 0.1
"""The smallest scale of a unit's effect, in log terms (about 10 %): units that agree within a few
percent, measured precisely, do not make a 5 % difference an outlier. With the default threshold
a unit's best pair must reach at most exp(-0.35) = 70 % of the others' median to be flagged."""


@dataclass(frozen=True)
class PairsSpec(Repeats):
    """Every pair of units (ranks, or nodes: all of two nodes' ranks) in concurrent rounds."""

    sizes: tuple[int, ...]
    """Requested bytes per message (send_recv) or per rank's buffer (all_reduce)."""
    primitive: str = "send_recv"
    level: str = "rank"
    """rank: every pair of ranks; node: every pair of nodes, the two nodes' ranks in one group."""
    nodes: int = 0
    """The nodes a node-level run pairs (its progress counts their pairs); 0 where unknown (a
    spec.json before it), read as the ranks."""
    dtype: str = "float32"
    window: int = 0
    """send_recv messages in flight each way per exchange; 0: sendrecv's default for the size."""
    threshold: float = DEFAULT_THRESHOLD
    """--outlier-threshold: the robust z-score of a unit's own busbw (pairs/outliers.py) that
    flags it."""

    kind = "pairs"

    def __post_init__(self) -> None:
        if self.primitive not in PAIR_PRIMITIVES:
            raise UsageError(f"--primitive must be sendrecv or allreduce, got '{self.primitive}'")
        if self.level not in LEVELS:
            raise UsageError(f"--level must be rank or node, got '{self.level}'")
        if not self.sizes or min(self.sizes) < 1:
            raise UsageError("sizes must be positive byte counts")
        if self.dtype not in DTYPES:
            raise UsageError(f"unknown dtype '{self.dtype}': choose from {', '.join(DTYPES)}")
        self.check_repeats()
        check_minimums(("--window", self.window, 0))
        if not self.threshold > 0:
            raise UsageError(f"--outlier-threshold must be positive, got {self.threshold}")


def circle_rounds(n: int) -> list[list[tuple[int, int]]]:
    """The rounds of the circle method over units 0..n-1: each a list of disjoint (a, b) pairs,
    a < b; every pair exactly once. Unit 0 stays, the others rotate one place per round. Odd n
    adds a dummy unit n: its partner of the round idles (n rounds, one unit idle in each)."""
    if n < 2:
        return []
    m = n + n % 2
    ring = list(range(m))
    rounds = []
    for _ in range(m - 1):
        pairs = [(ring[i], ring[m - 1 - i]) for i in range(m // 2)]
        rounds.append(sorted((min(a, b), max(a, b)) for a, b in pairs if n not in (a, b)))
        ring = [ring[0], ring[-1], *ring[1:-1]]
    return rounds


def confirmation_rounds(
    rounds: Sequence[Sequence[tuple[int, int]]], flagged: Collection[int]
) -> list[list[tuple[int, int]]]:
    """The rounds run again to confirm the `flagged` units: each round of `rounds` that holds a
    pair of a flagged unit, whole, so that the network is as loaded as when the pair was first
    measured (a round of its pairs alone would run them on a quieter network than the other
    units' pairs they are judged against). Only the flagged units' pairs are recorded
    (`remeasured_pair`); the round's other pairs are its load."""
    return [list(pairs) for pairs in rounds if any(remeasured_pair(p, flagged) for p in pairs)]


def remeasured_pair(pair: tuple[int, int], flagged: Collection[int]) -> bool:
    """Whether a confirmation records `pair`: one of its units is flagged."""
    return pair[0] in flagged or pair[1] in flagged


def confirmation_index(plan: int, position: int) -> int:
    """The measurement index of the confirmation of the pair at `position` among a launch's
    pairs in their order (every size's rounds, one after another): past the launch's `plan`
    (plan_size), so that it depends on nothing but the pair, whichever units the first
    standings flagged, and a resumed run can tell the planned rows from the confirmations."""
    return plan + position


def units_of(level: str, world_size: int, nnodes: int) -> int:
    """Units paired at a level: the ranks, or the nodes."""
    return world_size if level == "rank" else nnodes


def plan_size(workload: PairsSpec, world_size: int) -> int:
    """Rows one launch plans: a row per pair of its units (ranks, or at node level the nodes),
    size and mode. A size whose first standings flag a unit writes its pairs' confirmation rows
    besides, numbered past this plan (confirmation_index)."""
    units = workload.nodes if workload.level == "node" and workload.nodes else world_size
    pairs = units * (units - 1) // 2
    return pairs * len(workload.sizes) * len(workload.modes)


def standing_key(env: str, mode: str, size_bytes: int | str) -> tuple[str, str, str]:
    """What ranks.csv's standings of one size are known by: the launch's --env combination, the
    mode and the measured size (the asked one rounded down to whole elements)."""
    return (env, mode, str(size_bytes))


def unranked(spec: RunSpec, world_size: int, done: Collection[str]) -> int:
    """Sizes of a launch whose planned rows are all in `done` while ranks.csv holds no standings
    for them (a run stopped during their confirmation): work no missing row marks, so that a
    resume runs the launch again (Workload.unfinished). Sizes are measured in plan order, mode
    by mode, and ranks.csv gets a size's standings as its confirmation ends."""
    workload: PairsSpec = spec.workload
    blocks = [(mode, size) for mode in workload.modes for size in workload.sizes]
    per_size = plan_size(workload, world_size) // len(blocks) if blocks else 0
    if per_size == 0:
        return 0
    indices = {measurement_index(m, world_size, workload.tag) for m in done}
    rows = read_rows(Path(spec.launch.run_dir) / RANKS_CSV)
    ranked = {
        standing_key(r.get("env", ""), r.get("mode", ""), r.get("size_bytes", "")) for r in rows
    }
    itemsize = DTYPE_BYTES[workload.dtype]
    left = 0
    for block, (mode, size) in enumerate(blocks):
        if all(i in indices for i in range(block * per_size, (block + 1) * per_size)):
            key = standing_key(spec.env_label, mode, size // itemsize * itemsize)
            left += key not in ranked
    return left
