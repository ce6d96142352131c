"""A primitive's rows stepping together: history's change points look at each group of series
(a primitive's rows, the same nights) as one series more, and a row of a group found changed is
tested again at the group's night (bench/stats/changepoint.py calls it).

    built = build_groups(scores, white, scales, logs, labels)   # a Group per label of 3+ rows
    at = member_test(scores, logs, noise, pool, split)          # a row at its group's night

Why: a change of code slows a primitive's rows together (or a band of them) far more often than
a row alone, and a row's own test pays for not knowing the night: its largest step over ~54
nights, against Benjamini-Hochberg over the whole history. Where 10 of a history's 108 rows
stepped 20 % at one night (AR(1) phi 0.5, 60 nights), their own tests found 84 % of them
(ci/bench_stats_history.py). The group's series (its rows' mean, each row in its own score
units and weighted by member_weights) holds the step with a fraction of a row's noise, and a
row tested at a night given in advance is tested at one night, not its largest of ~54.

Error: the group series are members of their rows' Benjamini-Hochberg family, so a history in
which nothing changed shows a change point through a group only when that family selects one,
and its chance of any false change point stays at most alpha. A row is tested at its group's
night at the level its own test would join the family at (alpha (R + 1) / m), against the null
of |t| at a night given in advance (changepoint_null.FIXED). What that does not cover: the night
is chosen from a mean the row is part of (1 / rows of it), and the rows of a group that did not
change are each tested again, so where a group changed the rows beside its changed ones carry
more false change points (ci/bench_stats_history.py measures how many).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from distbench.stats.changepoint_model import Noise, profile
from distbench.stats.changepoint_null import NullPool

CLIP = 4.0
"""A row's night beyond this many of its score units from its mean counts as this many (a bad
night of one row moves its group's mean no further)."""
GROUP_MIN = 3
"""Rows a group needs to be looked at as one series: with two, its series is about either
row's."""


@dataclass(frozen=True)
class Group:
    """A group's rows and its own series."""

    members: tuple[int, ...]
    scores: np.ndarray
    """Its series (build_groups): judged as it is, not ranked again."""
    logs: np.ndarray
    """The same mean of its rows' log values, each less its own mean (where it stepped)."""
    white: float
    """The launch-noise variance of `scores` (its rows' launch noise is their own)."""
    log_white: float
    """The same of `logs`, in log units: where its step may have started is simulated with it
    (changepoint_where)."""
    scale: float
    """Log units per unit of `scores` for a step every row takes alike."""


def build_groups(
    scores: Mapping[int, np.ndarray], white: Mapping[int, float], scales: Mapping[int, float],
    logs: Sequence[np.ndarray], labels: Sequence[int],
) -> list[Group]:  # fmt: skip
    """One Group per label (>= 0) held by GROUP_MIN series or more, from each series' normal
    scores, their launch-noise variance and log units per score unit (changepoint_model.
    normal_scores) and its log values; a label's series must have one length (the caller
    aligns them: the same nights).

    Why not the rows' ranks: a row's ranks bound what an outlier night can do, and so they
    bound a step too. The mean of a group's log values ranked again is a series in which a
    clean step puts its last nights above all others, and its test could then say no more than
    p ~ 0.006 (12 rows 12 % slower, measured while building it); the mean of its rows' scores
    kept each row's step to what its ranks allow (10 of 36 rows 20 % slower: 88-89 % found,
    against 92-93 % from the log values; seeds 11 and 12 of ci/bench_stats_history.py's tenth,
    90 histories each). So a group's series is its rows' log values, each in its own score
    units (its log values over its scale) and clipped at CLIP, a bad night of one row bounded,
    averaged with member_weights, and judged as it is, not ranked again."""
    by_label: dict[int, list[int]] = {}
    for i, label in enumerate(labels):
        if label >= 0:
            by_label.setdefault(label, []).append(i)
    out = []
    for label, members in sorted(by_label.items()):
        if len(members) < GROUP_MIN:
            continue
        if len({len(scores[i]) for i in members}) > 1:
            raise ValueError(f"group {label}: its series differ in length")
        scale = np.array([scales[i] for i in members])
        weights = member_weights(scale)
        own = np.stack([np.asarray(logs[i], float) for i in members])
        own = own - own.mean(axis=1, keepdims=True)
        safe = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)[:, None]
        stacked = np.clip(own / safe, -CLIP, CLIP)
        noise = np.array([white[i] for i in members])
        reach = float((weights / safe[:, 0]).sum())  # score units of a step of 1 in every row
        log_noise = float((weights**2 * noise * safe[:, 0] ** 2).sum())
        out.append(Group(tuple(members), weights @ stacked, weights @ own,
                         float((weights**2 * noise).sum()), log_noise, 1.0 / reach))  # fmt: skip
    return out


def member_weights(scales: np.ndarray) -> np.ndarray:
    """(rows,) summing to 1: a row whose log values are quieter (fewer log units per score
    unit) shows a common step as more score units, so it weighs more, in inverse proportion to
    its scale, floored at half the rows' median (no row outweighs a typical one more than
    twice)."""
    usable = scales[np.isfinite(scales) & (scales > 0)]
    if not len(usable):
        return np.full(len(scales), 1.0 / len(scales))
    floor = float(np.median(usable)) / 2
    weights = 1.0 / np.maximum(np.nan_to_num(scales, nan=floor), floor)
    return weights / weights.sum()


@dataclass(frozen=True)
class AtNight:
    """A row tested at its group's night: the step there and its p-value."""

    effect: float
    """Its log values' mean after the night less before it."""
    t: float
    p_value: float


def member_test(
    scores: np.ndarray, logs: np.ndarray, noise: Noise, pool: NullPool, split: int
) -> AtNight | None:
    """A row (its normal scores, log values and noise: arrays of one) tested for a step whose
    first night is `split`, against its pool's null of |t| at a night given in advance; None
    where that night leaves too few nights on a side."""
    t, _effect = profile(scores[None, :], noise)
    at = float(t[0, split - 1]) if 1 <= split < len(scores) else 0.0
    if at == 0.0:
        return None
    p = pool.p_fixed(np.array([abs(at)]), noise.phi, noise.white, noise.pooled)
    effect = float(logs[split:].mean() - logs[:split].mean())
    return AtNight(effect if math.isfinite(effect) else 0.0, at, float(p[0]))
