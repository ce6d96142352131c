"""A matrix of pair measurements -> each unit's own value, by the model of what a pair measures:
its slower end.

`distbench pairs` times every pair of n ranks (or nodes); each sample is the slower rank's time,
and a pair's exchange cannot finish before its slower end has posted its messages. So, in log
time,

    y(a, b) = max(own(a), own(b)) + e(a, b),

and the model's exact inverse is own(a) = min over b of y(a, b): a unit is as fast as its best
pair (`slowest_end`). When k of n units are slow by a factor F, a fast unit still has a pair with
another fast unit, and every pair of a slow unit is F slower: the decomposition separates them by
the whole log F for any k up to n - 2. With n - 1 slow units every pair holds a slow unit, and
no measurement of pairs can tell which unit is fine (the stated limit, docs/pairs.md).

Why not the additive decomposition y(a, b) = mu + effect(a) + effect(b) (least squares, or Tukey's
median polish), measured before this was chosen:

- least squares separates slow from fast units by only (1 - (k - 1) / (n - 2)) log F when the
  physics is the slower end's: the whole slowdown for one slow unit, half of it when half are;
- at 4 units it cannot tell one noisy pair (0-1 slow) from two slow units (0 and 1) and one fast
  pair (2-3): both give effects -+ d / 4 and residuals of the same size, of opposite signs, so a
  rule that flags half of 4 units slow also flags both ends of a pair that a preemption slowed
  (a real 4-rank gloo run with one slowed rank flagged a healthy one beside it);
- median polish's first row medians are all slow when half of the units are, and it stops.

A unit's best pair ignores its other pairs, so one noisy pair (the box's load is one-sided: it
only slows) moves no unit; a healthy unit is misjudged only when every one of its n - 1 pairs was
slowed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Pair:
    """One measured pair."""

    a: int
    b: int
    y: float
    """The pair's value in log time (or -log bandwidth): larger is slower."""
    variance: float = math.nan
    """Sampling variance of y from the pair's own trials; NaN: unknown."""


@dataclass(frozen=True)
class Own:
    """One unit's own value under the slowest-end model."""

    unit: int
    y: float
    """min over its pairs of y: the value of its best pair."""
    partner: int
    """The other end of that pair."""
    variance: float
    """That pair's variance (NaN: unknown)."""
    pairs: int
    """Pairs measured with this unit."""


def slowest_end(pairs: Sequence[Pair]) -> dict[int, Own]:
    """unit -> its own value, the best of its pairs (module docstring); pairs with a non-finite y
    are left out. Two units share their one pair, so they get the same value: one pair cannot say
    which end is slow."""
    best: dict[int, Own] = {}
    for pair in pairs:
        if not math.isfinite(pair.y):
            continue
        for unit, partner in ((pair.a, pair.b), (pair.b, pair.a)):
            seen = best.get(unit)
            count = 1 + (seen.pairs if seen else 0)
            if seen is None or pair.y < seen.y:
                best[unit] = Own(unit, pair.y, partner, pair.variance, count)
            else:
                best[unit] = Own(unit, seen.y, seen.partner, seen.variance, count)
    return dict(sorted(best.items()))
