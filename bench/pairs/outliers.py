"""From pair results to each unit's standing: its own busbw from a decomposition of the pair
matrix (distbench.stats.decompose: a pair runs at its slower end, so a unit is as fast as its
best pair), a robust z-score of it against the other units (their median and MAD, the unit itself
left out), and the outliers, confirmed by a second measurement of the flagged units' pairs
(`confirm`). Torch-free and pure: the runner writes ranks.csv with it and the tests check it on
numbers.

Why the decomposition comes first: 0.2.0 scored each unit's median busbw over its pairs. When
half of the units are slow, every unit has half of its pairs or more with a slow one, every median
is slow, and nobody was flagged (2 of 4, 4 of 8). A unit's best pair is slow only when the unit
is: the fast units keep their pairs with each other.

Why the median and MAD of the others (Iglewicz and Hoaglin's robust z, in log terms): a unit is
measured against the units other than itself, so a slow unit never widens its own yardstick,
and, among few units, one noisy healthy unit widens it less; with up to half of the units slow,
the others of a slow unit are mostly fast, so their median is a fast unit's.

The scale is at least the measurement noise of the difference (its best pair's standard error
from its trials, and the others' typical one) and EFFECT_FLOOR (pairs/spec.py), so that units
that agree within a few percent do not make a 5 % difference an outlier. The noise matters where
MAD cannot see it: with one slow rank of 4, two of the three healthy units share their best pair,
so the others' MAD is 0, while on this loaded 2-core box healthy pairs' p50s scatter 2.5x (a
healthy rank whose two healthy pairs were both 1.5x slower than the third was flagged at the
floor alone).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from distbench.pairs.spec import EFFECT_FLOOR
from distbench.stats.decompose import Pair, slowest_end

MAD_TO_SIGMA = 1.4826
"""MAD x this estimates the standard deviation of normal data."""
PairValue = tuple[int, int, float, float]
"""(unit a, unit b, busbw GB/s, variance of log busbw from its trials (log_variance); NaN:
unknown)."""


@dataclass(frozen=True)
class Standing:
    """One unit among all: its busbw with its best partner, z-score, outlier or not."""

    unit: int
    pairs: int
    busbw_GBps: float
    """The busbw of its best pair: what this unit reaches with a healthy partner."""
    robust_z: float
    """(log busbw_GBps - the others' median) / max(1.4826 x their MAD, noise, EFFECT_FLOOR), all
    in log terms, noise from the trials of its best pair and of the others' (module docstring):
    < 0 slower."""
    outlier: bool
    first_z: float
    """The robust z of the first measurement: robust_z, except for a unit whose pairs were
    measured again (`confirm`)."""


def log_variance(samples: Sequence[float], trials: int) -> float:
    """The variance of the log of a pair's p50 from its samples (trial-major, `trials` equal
    runs), each trial summarised by its median: (pi / 2) var(log trial medians) / T, a median's
    large-sample variance; NaN below 2 trials. Every trial is taken, not a 95 % interval, so that
    3 to 5 trials (where no interval of the median exists) still say how much the pair
    scattered."""
    if trials < 2 or not samples or len(samples) % trials or min(samples) <= 0:
        return math.nan
    per = len(samples) // trials
    logs = [math.log(statistics.median(samples[i * per : (i + 1) * per])) for i in range(trials)]
    return math.pi / 2 * statistics.variance(logs) / trials


def standings(results: Iterable[PairValue], threshold: float) -> list[Standing]:
    """Every unit's standing; an outlier is at least `threshold` robust z below the others (slow:
    a fast unit is not a fault to look for). Pairs without a positive busbw are left out."""
    measured = [r for r in results if math.isfinite(r[2]) and r[2] > 0]
    # y = log time up to a constant (-log busbw): larger is slower.
    own = slowest_end([Pair(a, b, -math.log(bw), var) for a, b, bw, var in measured])
    found = []
    for unit, mine in own.items():
        others = [o for u, o in own.items() if u != unit]
        z = 0.0
        if others:
            center = statistics.median(o.y for o in others)
            mad = statistics.median(abs(o.y - center) for o in others)
            noise = math.sqrt(
                known(mine.variance) + statistics.median(known(o.variance) for o in others)
            )
            z = -(mine.y - center) / max(MAD_TO_SIGMA * mad, noise, EFFECT_FLOOR)
        found.append(Standing(unit, mine.pairs, math.exp(-mine.y), z, z <= -threshold, z))
    return found


def flagged_units(found: Iterable[Standing]) -> list[int]:
    """The units a standings call flags, in order: those whose pairs are measured again."""
    return sorted(standing.unit for standing in found if standing.outlier)


def remeasured(results: Iterable[PairValue], again: Iterable[PairValue]) -> list[PairValue]:
    """The pair results with each pair measured again taking its new value."""
    new = {(value[0], value[1]): value for value in again}
    return [new.get((value[0], value[1]), value) for value in results]


def confirm(first: Sequence[Standing], again: Sequence[Standing]) -> list[Standing]:
    """The standings after a confirmation. A unit flagged in `first` takes its standing in
    `again` (standings over the results with its pairs measured again: `remeasured`), with its
    first z kept in first_z: an outlier only when flagged both times. Every other unit keeps its
    first standing, so that for every unit `outlier` is robust_z <= -threshold. One measurement
    of a unit's pairs is not enough to accuse it: a loaded box slows a healthy unit's every pair
    of one measurement now and then (a 4-rank gloo run on 2 cores flagged a healthy rank at
    z = -4.2), and seldom twice."""
    later = {standing.unit: standing for standing in again}
    confirmed = []
    for standing in first:
        new = later.get(standing.unit)
        if standing.outlier and new is not None:
            standing = replace(new, first_z=standing.robust_z)
        confirmed.append(standing)
    return confirmed


def known(variance: float) -> float:
    """A variance, 0 where unknown (the floor then stands in for it)."""
    return variance if math.isfinite(variance) else 0.0
