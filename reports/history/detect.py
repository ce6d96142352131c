"""history's series and their change points: one series per case (its judged metric, night by
night, cut where the metric's definition changed), judged by the statistical core's change-point
method (distbench.stats.changepoint: AR(1) drift plus launch noise, the largest step statistic
against its simulated null, Benjamini-Hochberg over the series; docs/history.md).

    series = build_series(points)
    judged = judge_series(series, alpha=0.05, floor=0.05)

A night's launches tell the launch noise of its value: where nights have two launches or more,
the spread of their log values (pooled over the series' nights) divided by the launches of a
night is the white part of the noise model, known rather than fitted. It helps: with drift and
as much launch noise, 7.5 false change points per 100 series with it ignored, 2.2 with it known
at phi = 0.5; 21.5 and 9.5 at phi = 0.8 (python ci/bench_stats_history.py).
"""

from __future__ import annotations

import itertools
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


def codes_of(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(codes, names): a text column as integers and the sorted names they stand for (its
    categories when it is one: a million points are never turned back into strings)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        names = np.asarray(column.cat.categories, dtype=object)
        order = np.argsort(names.astype(str), kind="stable")
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        codes = column.cat.codes.to_numpy()
        return np.where(codes >= 0, rank[codes], -1), names[order]
    codes, uniques = pd.factorize(column, sort=True)
    return codes, np.asarray(uniques, dtype=object)


def build_series(points: pd.DataFrame) -> list[Series]:
    """Every (case, definition segment) of the points (sorted by kind, key, metric, run, with a
    `segment` column), in that order."""
    if not len(points):
        return []
    coded = {c: codes_of(points[c]) for c in ("case", "kind", "key", "metric")}
    segment = points["segment"].to_numpy()
    same = np.ones(len(points) - 1, dtype=bool)
    for c in ("kind", "key", "metric"):
        codes = coded[c][0]
        same &= codes[1:] == codes[:-1]
    starts = np.flatnonzero(np.r_[True, ~same | (segment[1:] != segment[:-1]), True])
    columns = {c: points[c].to_numpy(dtype=float) for c in ("run", "value", "launches", "spread")}
    labels = [coded[c] for c in ("case", "kind", "metric")]
    out = []
    for start, end in itertools.pairwise(starts):
        case, kind, metric = (str(names[codes[start]]) for codes, names in labels)
        out.append(
            Series(
                case, kind, metric, int(segment[start]),
                columns["run"][start:end].astype(int), columns["value"][start:end],
                launch_noise(columns["spread"][start:end], columns["launches"][start:end]),
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
