"""Change points of a case's nightly series: where its level stepped and stayed.

    found = detect_series(values, min_change=0.05)     # [(index, p_value)]

Candidates come from ruptures' PELT with the linear kernel (least squares on log values, so a
step is a ratio), penalised by 5 sigma^2 log n with sigma estimated from the night-to-night
differences (robust: a step moves one difference only). Each candidate is then judged as a compare
row is: the exact rank test (reports/noise.py) between the nights since the previous change point
and the nights up to the next one, its p-values Benjamini-Hochberg adjusted across every candidate
of the history, and a step smaller than `min_change` is not reported. docs/history.md says why
ruptures, and what the tests measured on this machine's noise.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from distbench.reports.noise import bh_adjust, two_sided_p

PENALTY = 5.0
"""PELT's penalty per change point, in sigma^2 log n: BIC's 2 plus a margin for heavy tails
(chosen with ci/bench_history.py detection: no change point in pure noise)."""
MIN_SIZE = 3
"""Nights on each side of a change point: one or two bad nights are noise, not a step."""
ALPHA = 0.001
"""Benjamini-Hochberg level across all candidates of a history."""
MIN_CHANGE = 0.05
"""Smallest step reported, as a fraction of the level before it."""


@dataclass(frozen=True)
class Candidate:
    """A change point before the significance filter: series positions and the two sides."""

    index: int
    """Position in the series of the first night after the change."""
    before: tuple[float, ...]
    after: tuple[float, ...]
    p_value: float
    """Two-sided exact rank test, before vs after."""

    @property
    def change(self) -> float:
        """median(after) / median(before) - 1."""
        return statistics.median(self.after) / statistics.median(self.before) - 1.0


def noise_sigma(logs: np.ndarray) -> float:
    """sigma of the night-to-night noise from the median absolute first difference (a step moves
    one difference only, so it barely moves this estimate)."""
    diffs = np.diff(logs)
    mad = float(np.median(np.abs(diffs - np.median(diffs))))
    return max(mad * 1.4826 / math.sqrt(2.0), 1e-9)


def candidates(values: Sequence[float], penalty: float = PENALTY) -> list[Candidate]:
    """PELT's change points of one series (positive values), each with its rank-test p-value."""
    import ruptures

    if len(values) < 2 * MIN_SIZE:
        return []
    logs = np.log(np.asarray(values, dtype=float))
    sigma = noise_sigma(logs)
    algo = ruptures.KernelCPD(kernel="linear", min_size=MIN_SIZE, jump=1)
    ends = algo.fit(logs.reshape(-1, 1)).predict(pen=penalty * sigma**2 * math.log(len(logs)))
    bounds = [0, *ends]
    found = []
    for left, index, right in zip(bounds, bounds[1:], bounds[2:], strict=False):
        before, after = tuple(values[left:index]), tuple(values[index:right])
        found.append(Candidate(index, before, after, two_sided_p(before, after)))
    return found


def significant(
    found: Sequence[Candidate], alpha: float = ALPHA, min_change: float = MIN_CHANGE
) -> list[tuple[Candidate, float]]:
    """(candidate, q-value) of those whose BH q <= alpha and step >= min_change."""
    q_values = bh_adjust([c.p_value for c in found])
    return [
        (c, q)
        for c, q in zip(found, q_values, strict=True)
        if q <= alpha and abs(c.change) >= min_change
    ]
