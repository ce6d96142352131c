"""ranks.csv of `distbench pairs`: one row per rank (or node) per size and mode, with its own busbw
from the decomposition of the pair matrix (its best pair), its robust z-score against the other
ranks and whether it is an outlier, confirmed by measuring a flagged rank's pairs again
(pairs/outliers.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RankRow:
    """One rank's (or node's) standing among all of them: one row of ranks.csv."""

    run_id: str
    label: str
    level: str
    """rank (every pair of ranks) or node (every pair of nodes)."""
    rank: str
    """The global rank; at node level the node's ranks, e.g. `0-3`."""
    host: str
    node: int
    """The torchrun node (GROUP_RANK) the rank ran on, or the node itself."""
    primitive: str
    """send_recv or all_reduce: what each pair ran."""
    mode: str
    size_bytes: int
    env: str
    """The --env combination the launch ran with (`NAME=V ...`); empty without --env."""
    pairs: int
    """Pairs this rank took part in (n - 1)."""
    busbw_GBps: float
    """Its best pair's busbw, GB/s (1e9 B/s): a pair runs at its slower end, so this is what the
    rank reaches with a healthy partner (v4; before: the median busbw over its pairs)."""
    robust_z: float
    """(log busbw - median of the other ranks' log busbw) / max(1.4826 x their MAD, the trials'
    noise, 0.1): the robust z-score (v4; before: of the medians, linear, scale floor 10 %). For a
    rank the first measurement flagged: the z with its pairs measured again (v4)."""
    outlier: str
    """true when robust_z <= -threshold (--outlier-threshold, default 3.5), else false: flagged by
    the first measurement of its pairs and again by their confirmation (v4; before: by one
    measurement)."""
    first_z: float = float("nan")
    """The robust z of the first measurement of its pairs: robust_z, except for a rank flagged
    there (first_z <= -threshold), whose pairs were measured again; robust_z above -threshold
    then says the confirmation cleared it (v4; empty before)."""
