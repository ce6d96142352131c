"""The parts of a series that history's change points search (bench/stats/changepoint.py calls
them): each part's largest step and its p-value (test_parts, search), where a changed part's
step lies in its log values (placers, place) and the nights it may have started on (located).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from distbench.stats.changepoint_model import FIELDS, MIN_SIZE, Noise, estimate_noise, profile
from distbench.stats.changepoint_null import NullPool
from distbench.stats.changepoint_where import night_range


@dataclass(frozen=True)
class Part:
    """A part of a series searched, and the step it holds if any."""

    series: int
    start: int
    end: int
    split: int
    """Position (in the series) of the first night after its largest step."""
    effect: float
    t: float
    p_value: float
    together: bool = False
    """Tested at its group's night (Found.together)."""
    nights: tuple[int, int] | None = None
    """Where its step may have started (Found.nights); None: not yet ranged."""


def located(part: Part, series: Sequence[np.ndarray], white: Sequence[float]) -> tuple[int, int]:
    """Where the step of a changed part may have started (changepoint_where), as positions in
    its series."""
    logs = np.asarray(series[part.series], float)[part.start : part.end]
    first, last = night_range(logs, float(white[part.series]), part.split - part.start)
    return first + part.start, last + part.start


def test_parts(
    scores: np.ndarray, logs: np.ndarray, noise: Noise, members: list[tuple[int, int, int]],
    null_of: dict[int, NullPool],
) -> list[Part]:  # fmt: skip
    """Each member (series, start, end) with its part of the series in a row of `scores` (and
    of `logs`): its largest |t| and that statistic's p-value under its series' pool at the
    part's length; the step there in log units (the difference of the part's two means)."""
    t, _effect = profile(scores, noise)
    k = np.abs(t).argmax(axis=1)
    rows = np.arange(len(members))
    top, chosen = np.abs(t[rows, k]), t[rows, k]
    after = np.arange(logs.shape[1])[None, :] > k[:, None]
    size = np.where(after, logs, 0).sum(1) / after.sum(1)
    size -= np.where(~after, logs, 0).sum(1) / (~after).sum(1)
    p = np.empty(len(members))
    by_pool: dict[int, list[int]] = {}
    for j, (i, _start, _end) in enumerate(members):
        by_pool.setdefault(id(null_of[i]), []).append(j)
    for group in by_pool.values():
        pool = null_of[members[group[0]][0]]
        length = np.array([members[j][2] - members[j][1] for j in group])
        p[group] = pool.p_values(
            top[group], noise.phi[group], noise.white[group], length, noise.pooled[group]
        )
    return [
        Part(i, start, end, start + int(k[j]) + 1, float(size[j]), float(chosen[j]), float(p[j]))
        for j, (i, start, end) in enumerate(members)
    ]


def placers(
    series: Sequence[np.ndarray], white: Sequence[float], selected: list[int]
) -> dict[int, Noise]:
    """The noise model of each changed series' own log values, which place its change points."""
    out: dict[int, Noise] = {}
    by_length: dict[int, list[int]] = {}
    for i in selected:
        by_length.setdefault(len(series[i]), []).append(i)
    for members in by_length.values():
        logs = np.stack([np.asarray(series[i], float) for i in members])
        noise = estimate_noise(logs, np.array([float(white[i]) for i in members]))
        out.update((i, noise.take(np.array([j]))) for j, i in enumerate(members))
    return out


def place(parts: list[Part], series: Sequence[np.ndarray], placing: dict[int, Noise]) -> list[Part]:
    """Each changed part's change point moved to the largest |t| of the log values themselves:
    the ranks test whether the part changed, robust to outlier nights, but blur where (measured
    while building it: a 20 % step in drift with phi = 0.8 at its very night 76 % of the time by
    the ranks' profile, 95 % by the values')."""
    out = []
    for part in parts:
        logs = np.asarray(series[part.series], float)[None, part.start : part.end]
        t, _effect = profile(logs, placing[part.series])
        k = int(np.abs(t[0]).argmax()) + 1
        effect = float(logs[0, k:].mean() - logs[0, :k].mean())
        out.append(Part(part.series, part.start, part.end, part.start + k, effect, part.t,
                        part.p_value, part.together))  # fmt: skip
    return out


def search(
    parts: list[tuple[int, int, int]], series: Sequence[np.ndarray], scored: dict[int, np.ndarray],
    noises: dict[int, Noise], null_of: dict[int, NullPool],
) -> list[Part]:  # fmt: skip
    """test_parts on every part (series, start, end) of 2 MIN_SIZE nights or more, those of
    one length at once."""
    by_length: dict[int, list[tuple[int, int, int]]] = {}
    for i, start, end in parts:
        if end - start >= 2 * MIN_SIZE:
            by_length.setdefault(end - start, []).append((i, start, end))
    out = []
    for members in by_length.values():
        logs = np.stack([np.asarray(series[i], float)[start:end] for i, start, end in members])
        scores = np.stack([scored[i][start:end] for i, start, end in members])
        noise = concat([noises[i] for i, _start, _end in members])
        out += test_parts(scores, logs, noise, members, null_of)
    return out


def concat(noises: Sequence[Noise]) -> Noise:
    return Noise(*(np.concatenate([getattr(x, f) for x in noises]) for f in FIELDS))


def unknown_noise() -> Noise:
    """The noise of a series too short to estimate one: unknown (nan)."""
    nan = np.array([math.nan])
    return Noise(nan, nan, nan, nan, nan, np.array([False]))
