"""Simulated nights for the history tests: AR(1) series of this box's night noise."""

from __future__ import annotations

import math

import numpy as np

NIGHT_SD = 0.10 / math.sqrt(2)
"""A night value's sd: two launches of this box a night (ci/bench_stats_history.py)."""


def ar1_nights(rng: np.random.Generator, count: int, phi: float = 0.5, n: int = 60) -> np.ndarray:
    """(count, n) AR(1) series of marginal sd NIGHT_SD, started in their stationary law."""
    e = rng.standard_normal((count, n)) * math.sqrt(1 - phi * phi)
    x = np.empty((count, n))
    x[:, 0] = rng.standard_normal(count)
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x * NIGHT_SD
