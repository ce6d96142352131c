"""From pair results to each unit's standing: the median busbw over its pairs, a robust z-score
against the other units (their median and MAD, not mean and standard deviation; the unit itself
left out, so that a slow unit does not widen the yardstick that should flag it), and the
outliers. Torch-free and pure: the runner writes ranks.csv with it and the tests check it on
numbers.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from distbench.pairs.spec import MAD_FLOOR

MAD_TO_SIGMA = 1.4826
"""MAD x this estimates the standard deviation of normal data."""


@dataclass(frozen=True)
class Standing:
    """One unit among all: its median busbw over its pairs, robust z-score, outlier or not."""

    unit: int
    pairs: int
    busbw_GBps: float
    robust_z: float
    outlier: bool


def unit_medians(results: Iterable[tuple[int, int, float]]) -> dict[int, tuple[int, float]]:
    """(unit a, unit b, busbw) of each pair -> unit -> (pairs, median busbw over them)."""
    seen: dict[int, list[float]] = {}
    for a, b, busbw in results:
        seen.setdefault(a, []).append(busbw)
        seen.setdefault(b, []).append(busbw)
    return {unit: (len(v), statistics.median(v)) for unit, v in sorted(seen.items())}


def robust_z(values: Mapping[int, float]) -> dict[int, float]:
    """unit -> (value - median of the others) / scale of the others, scale = max(1.4826 x MAD,
    MAD_FLOOR x median): each unit is measured against the units other than itself (leave one
    out), so a slow unit never widens its own yardstick and, among few units (4 ranks), one noisy
    healthy unit widens it less."""
    if len(values) < 2:
        return dict.fromkeys(values, 0.0)
    z = {}
    for unit, value in values.items():
        others = [v for u, v in values.items() if u != unit]
        center = statistics.median(others)
        mad = statistics.median(abs(v - center) for v in others)
        scale = max(MAD_TO_SIGMA * mad, MAD_FLOOR * abs(center))
        z[unit] = (value - center) / scale if scale else 0.0
    return z


def standings(results: Iterable[tuple[int, int, float]], threshold: float) -> list[Standing]:
    """Every unit's standing; an outlier is at least `threshold` robust z below the median (slow:
    a fast unit is not a fault to look for)."""
    medians = unit_medians(results)
    z = robust_z({unit: busbw for unit, (_, busbw) in medians.items()})
    return [
        Standing(unit, pairs, busbw, z[unit], z[unit] <= -threshold)
        for unit, (pairs, busbw) in medians.items()
    ]
