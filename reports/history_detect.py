"""history's series and their change points: one series per case (its judged metric, night by
night, cut where the metric's definition changed), judged by the statistical core's change-point
method (distbench.stats.changepoint: AR(1) drift plus launch noise, the largest step statistic
against its simulated null, Benjamini-Hochberg over the series; docs/history.md).

    series = build_series(points)
    judged = judge_series(series, alpha=0.05, floor=0.05)

A night's launches tell the launch noise of its value: where nights have two launches or more,
the spread of their log values (pooled over the series' nights) divided by the launches of a
night is the white part of the noise model, known rather than fitted. It helps: fitted as AR(1)
alone, drift with phi = 0.8 under as much launch noise gave 19-20 % false change points at 5 %,
10-11 % with the launch noise known (python ci/bench_stats_history.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from distbench.stats.changepoint import SeriesChanges, detect_changes
from distbench.stats.changepoint_null import NullPool, pool_for

ALPHA = 0.05
"""Benjamini-Hochberg's q over the history's series: when nothing changed, the chance that the
history shows any change point is at most this (the nightly gate's alpha)."""
MIN_CHANGE = 0.05
"""Smallest step reported, as a fraction of the level before it."""


@dataclass(frozen=True)
class Series:
    """One case's nights of one definition of its metric."""

    case: str
    kind: str
    metric: str
    segment: int
    runs: np.ndarray
    """Run positions (by start time) of its nights, ascending."""
    values: np.ndarray
    """Each night's value (the geometric mean of its launches)."""
    white: float
    """The launch-noise variance of a night's log value (0: one launch a night)."""


def launch_noise(spread: np.ndarray, launches: np.ndarray) -> float:
    """The variance of a night value's launch noise: the nights' launch variances pooled (each
    with launches - 1 degrees of freedom), over the mean number of launches a night."""
    df = np.where(np.isfinite(spread), launches - 1, 0)
    if df.sum() < 2:
        return 0.0
    pooled = float((np.where(df > 0, spread, 0.0) * df).sum() / df.sum())
    return pooled * float(np.mean(1.0 / np.maximum(launches, 1)))


def build_series(points: pd.DataFrame) -> list[Series]:
    """Every (case, definition segment) of the points (sorted by kind, key, metric, run, with a
    `segment` column), in that order."""
    out = []
    columns = ["run", "value", "launches", "spread", "segment"]
    for (kind, _key, metric), frame in points.groupby(
        ["kind", "key", "metric"], sort=False, observed=True
    ):
        case = str(frame["case"].iloc[0])
        arrays = {c: frame[c].to_numpy() for c in columns}
        for segment in np.unique(arrays["segment"]):
            rows = arrays["segment"] == segment
            out.append(
                Series(
                    case, str(kind), str(metric), int(segment),
                    arrays["run"][rows].astype(int), arrays["value"][rows].astype(float),
                    launch_noise(arrays["spread"][rows].astype(float),
                                 arrays["launches"][rows].astype(float)),
                )
            )  # fmt: skip
    return out


def judge_series(
    series: list[Series], alpha: float = ALPHA, floor: float = MIN_CHANGE,
    pools: Callable[[int, bool], NullPool] = pool_for,
) -> list[SeriesChanges]:  # fmt: skip
    """Each series' change points, in series order (distbench.stats.changepoint)."""
    return detect_changes(
        [np.log(s.values) for s in series], [s.white for s in series], alpha, floor, pools
    )
