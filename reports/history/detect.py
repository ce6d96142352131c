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

Relative mode (the default; the nightly gate judges each primitive the same way): a shared box
moves every case of a night together, so each case is judged beyond the rest of its run, and what
moved every primitive alike is a series of its own, the whole run (relative_series). On this
box's recorded sessions read as histories, that took the change points found with no step from
14.7 per 100 series to 1.7 (the box's level had moved for every row at once) and found a 25 %
step of one or three primitives in 18-30 % of their series instead of 0-11 %; with each
primitive's rows also judged together (group_labels), 20.3 against 2.5, and 43-52 % against
2-14 % (ci/bench_stats_history.py, docs/history.md). A relative series keeps its own launch
noise as the white part: the common level's own (a median over primitives) is small beside it
(launch sd 0.11 against 0.12 on those sessions, the same verdicts).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from distbench.stats.changepoint import SeriesChanges, detect_changes
from distbench.stats.changepoint_null import NullPool, pool_for
from distbench.stats.common import MIN_RELATIVE, common_level

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
    primitive: str = ""
    common: np.ndarray | None = None
    """Relative mode: the run's common level at each of its nights, in log units, taken out
    before it is judged (relative_series); None: judged on its own level."""

    @property
    def whole_run(self) -> bool:
        """Whether it is a kind's whole-run series (relative_series), not a case's."""
        return self.case == whole_run_case(self.kind)

    @property
    def judged(self) -> np.ndarray:
        """The log values it is judged on: its own, less the run's common level if relative."""
        logs = np.log(self.values)
        return logs if self.common is None else logs - self.common


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
    labels = [coded[c] for c in ("case", "kind", "metric", "key")]
    out = []
    for start, end in itertools.pairwise(starts):
        case, kind, metric, key = (str(names[codes[start]]) for codes, names in labels)
        out.append(
            Series(
                case, kind, metric, int(segment[start]),
                columns["run"][start:end].astype(int), columns["value"][start:end],
                launch_noise(columns["spread"][start:end], columns["launches"][start:end]),
                str(json.loads(key).get("primitive", "")),
            )
        )  # fmt: skip
    return out


def whole_run_case(kind: str) -> str:
    """The name of a kind's whole-run series: 'whole run (comm)'."""
    return f"whole run ({kind})"


def relative_series(
    series: list[Series], runs: int, steps: dict[int, np.ndarray] | None = None
) -> list[Series]:
    """Relative mode: each series of a kind and metric with MIN_RELATIVE primitives or more is
    judged beyond the rest of its run: from each night's log value the night's common level is
    taken out, the median over every primitive of its rows' deviations from their own series'
    means, averaged with row_weights (distbench.stats.common); then one series more per such
    kind and metric, the whole run,
    whose nights are that level (values: its ratio to the run's mean state). A night that fewer
    than MIN_RELATIVE primitives measured has no level: a relative series and the whole run skip
    it, and a series with more such nights than others stays on its own level; fewer primitives
    in all: the series as they are.
    `steps`: series index -> its own steps beyond the run (own_steps), taken out of its vote
    (judge_history).

    Every primitive votes, the judged one too; the gate leaves it out (engine.common_levels),
    history cannot: with 3 of 7 primitives slower, the median of the six others is half their
    step, and the cases of the rest read faster on that night (on this box's recorded
    sessions, 17.7 change points per 100 of their series, against none with every primitive
    voting; measured while building it, docs/history.md)."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, s in enumerate(series):
        groups.setdefault((s.kind, s.metric), []).append(i)
    out = list(series)
    wholes = []
    for (kind, metric), members in groups.items():
        primitives = np.array([series[i].primitive for i in members])
        if len(set(primitives.tolist())) < MIN_RELATIVE:
            continue
        deviation = np.full((runs, len(members)), np.nan)
        for j, i in enumerate(members):
            logs = np.log(series[i].values) - (steps or {}).get(i, 0.0)
            deviation[series[i].runs, j] = logs - logs.mean()
        level = common_level(deviation, primitives, "", row_weights(deviation))
        voters = [np.isfinite(deviation[:, primitives == p]).any(axis=1) for p in set(primitives)]
        level[np.sum(voters, axis=0) < MIN_RELATIVE] = np.nan  # too few primitives that night
        for i in members:
            one = series[i]
            known = np.isfinite(level[one.runs])
            if known.sum() * 2 < len(known):  # mostly nights without a level: its own level
                continue
            values, runs_in = one.values[known], one.runs[known]
            common = on_grid(level[runs_in], np.log(values))
            out[i] = replace(one, runs=runs_in, values=values, common=common)
        nights = np.flatnonzero(np.isfinite(level))
        case = whole_run_case(kind)
        wholes.append(Series(case, kind, metric, 0, nights, np.exp(level[nights]), 0.0))
    return out + wholes


def on_grid(common: np.ndarray, logs: np.ndarray) -> np.ndarray:
    """The common level as a series of tied values can take it: rounded to the smallest gap
    between its values when at least half of its nights repeat a value (a coarse timer; a night
    whose fastest trial is the same trial). The series is judged on its ranks: a level finer
    than its values would break every tie in the order of the level, and every tied series
    would then share that order (their ranks correlated as one: measured while building it, 108
    such series counted as 5 to 7 independent ones, so their drift was not pooled)."""
    distinct = np.unique(logs)
    if len(distinct) > len(logs) // 2 or len(distinct) < 2:
        return common
    step = float(np.diff(distinct).min())
    return np.round(common / step) * step


def row_weights(deviation: np.ndarray) -> np.ndarray:
    """(rows,): each row's weight in its primitive's vote: the inverse square of its own typical
    change from one night to the next (the mean absolute difference of consecutive nights it
    has), that change floored at half the rows' median so that no row outweighs a typical one
    more than four times. With a plain mean a primitive's noisiest rows (a 1K row) make the
    level noisy, and a quiet row judged beyond that level carries its noise: on nights drawn as
    ci/bench_history.py writes them (no drift of the box; 16 histories of 30 nights, seed 1), a
    20 % step of broadcast was found in 12 % of its rows with a plain mean, 62 % weighted and
    64 % on their own levels; the plain mean's rows also counted as too few independent series
    for their drift to be pooled (ci/bench_stats_history.py)."""
    full = np.isfinite(deviation).all(axis=0)
    spreads = np.full(deviation.shape[1], np.nan)
    if len(deviation) > 1:
        spreads[full] = np.abs(np.diff(deviation[:, full], axis=0)).mean(axis=0)
    for j in np.flatnonzero(~full):  # rows missing some nights: their own nights in order
        values = deviation[np.isfinite(deviation[:, j]), j]
        if len(values) > 1:
            spreads[j] = float(np.mean(np.abs(np.diff(values))))
    usable = spreads[np.isfinite(spreads) & (spreads > 0)]
    floor = float(np.median(usable)) / 2 if len(usable) else 1.0
    return 1.0 / np.maximum(np.nan_to_num(spreads, nan=floor), floor) ** 2


def own_steps(series: Series, judged: SeriesChanges) -> np.ndarray:
    """A relative series' own steps beyond the run: the means of its judged log values between
    its change points, less the first part's (zeros when it has none)."""
    bounds = [0, *(f.index for f in judged.found), len(series.values)]
    logs, out = series.judged, np.zeros(len(series.values))
    for start, end in itertools.pairwise(bounds):
        out[start:end] = logs[start:end].mean() - logs[: bounds[1]].mean()
    return out


def on_nights(step: np.ndarray, judged_runs: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """A relative series' steps (on the nights it was judged on) on every night of its series:
    a night it skipped (no level) takes the step of the night before it, or after it at the
    start."""
    at = np.clip(np.searchsorted(judged_runs, runs, side="right") - 1, 0, len(step) - 1)
    return step[at]


def judge_history(
    series: list[Series], runs: int, relative: bool, alpha: float = ALPHA,
    floor: float = MIN_CHANGE, pools: Callable[[int, bool], NullPool] = pool_for,
) -> tuple[list[Series], list[SeriesChanges]]:  # fmt: skip
    """The series judged (judge_series), relative (relative_series) or not, with their judged
    form. Relative mode looks twice: when some cases changed beyond the run, their own steps
    (at the nights found, STEP_ROUNDS) are taken out of their votes and every series is judged
    again, so that primitives that changed do not move the level the rest are judged against
    (the median shifts by an order statistic's worth even when a minority moved)."""
    if not relative:
        return series, judge_series(series, alpha, floor, pools)
    first = relative_series(series, runs)
    judged = judge_series(first, alpha, floor, pools)
    changed = [i for i in range(len(series)) if judged[i].found and first[i].common is not None]
    if not changed:
        return first, judged
    current = first
    for _ in range(STEP_ROUNDS):  # the steps and the level they leave, at the nights found
        steps = {i: on_nights(own_steps(current[i], judged[i]), current[i].runs, series[i].runs)
                 for i in changed}  # fmt: skip
        current = relative_series(series, runs, steps)
    return current, judge_series(current, alpha, floor, pools)


STEP_ROUNDS = 3
"""Rounds of (own steps given the level, the level given the steps) before the second look: a
step measured against a level its own primitive moved is short by that much, and the level
keeps a share of it; each round takes out most of what is left (3 of 7 primitives 25 % slower:
the level moved 0.018 in logs, 0.008 after one round, under 0.002 after three)."""


def judge_series(
    series: list[Series], alpha: float = ALPHA, floor: float = MIN_CHANGE,
    pools: Callable[[int, bool], NullPool] = pool_for,
) -> list[SeriesChanges]:  # fmt: skip
    """Each series' change points, in series order (distbench.stats.changepoint). The whole-run
    series are a family of their own, and each keeps its own phi: whether the box (or every
    primitive) changed is another question than whether a case changed beyond it, and the box's
    drift is not the cases'. So the cases' Benjamini-Hochberg is not spent on the whole run,
    which among 108 cases would need p <= 0.05 / 109 alone, and each family's chance of any
    false change point is at most `alpha`."""
    whole = [s.whole_run for s in series]
    return detect_changes(
        [s.judged for s in series], [s.white for s in series], alpha, floor, pools,
        families=[int(w) for w in whole], alone=whole, groups=group_labels(series),
    )  # fmt: skip


def group_labels(series: list[Series]) -> list[int]:
    """Each series' group (distbench.stats.changepoint_group): the cases of one primitive, kind
    and metric judged on the same nights; -1 for the whole run and cases without a primitive."""
    labels: dict[tuple[str, str, str, bytes], int] = {}
    out = []
    for s in series:
        if s.whole_run or not s.primitive:
            out.append(-1)
            continue
        key = (s.kind, s.metric, s.primitive, np.asarray(s.runs, np.int64).tobytes())
        out.append(labels.setdefault(key, len(labels)))
    return out
