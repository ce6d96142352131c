"""Intervals for the per-night rates of the gate's replay (false alarms, catches) that let the
nights depend on each other, as they do: every night judged against one baseline window shares
it, and a shared box's episodes (the hypervisor taking the CPU for minutes) fail several
consecutive nights of a recording at once. Clopper-Pearson counts every night as independent and
is too narrow then. Here windows are resampled with replacement and the judged nights in moving
blocks of consecutive nights (a two-way block bootstrap). The bootstrap's variance of the rate over
the binomial one is the design effect; Clopper-Pearson on the effective number of nights (nights
over the design effect, never more than the nights) is the interval printed: never narrower than
Clopper-Pearson, and it does not collapse to a point when every night failed, or none did, as
the bootstrap's own percentiles do.

ci/bench_blocks.py checks by simulation how often it holds the true rate (docs/gate.md: how sure
these rates are).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps

BLOCK = 4
"""Nights a block holds: g5's two episodes spanned 5-6 launches, 3 nights of 2 launches."""

REPS = 2000


def clopper_pearson(hits: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """The exact binomial interval; `hits` and `n` may be effective (non-whole) counts."""
    tail = (1 - level) / 2
    low = float(sps.beta.ppf(tail, hits, n - hits + 1)) if hits > 0 else 0.0
    high = float(sps.beta.ppf(1 - tail, hits + 1, n - hits)) if hits < n else 1.0
    return low, high


def resampled_rates(
    outcomes: np.ndarray, block: int = BLOCK, reps: int = REPS, seed: int = 0
) -> np.ndarray:
    """The rate in `reps` two-way block resamples: `outcomes` is windows x nights (x outcomes per
    night), in recorded night order, 1 a hit, 0 a miss, nan where the night was not judged (it is
    in the window). Windows are drawn with replacement; nights as moving blocks of `block`
    consecutive nights, as many as cover the nights once."""
    grid = outcomes.reshape(outcomes.shape[0], outcomes.shape[1], -1).astype(float)
    windows, nights = grid.shape[:2]
    block = max(1, min(block, nights))
    rng = np.random.default_rng(seed)
    count = math.ceil(nights / block)
    picks_w = rng.integers(0, windows, size=(reps, windows))
    starts = rng.integers(0, nights - block + 1, size=(reps, count))
    picks_n = (starts[:, :, None] + np.arange(block)).reshape(reps, -1)[:, :nights]
    sample = grid[picks_w[:, :, None], picks_n[:, None, :]]  # reps x windows x nights x k
    judged = (~np.isnan(sample)).sum(axis=(1, 2, 3))
    return (np.nansum(sample, axis=(1, 2, 3)) / np.maximum(judged, 1))[judged > 0]


def percentile_interval(
    outcomes: np.ndarray, block: int = BLOCK, reps: int = REPS, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """The block bootstrap's own percentile interval (compared in the simulation only)."""
    tail = (1 - level) / 2
    low, high = np.quantile(resampled_rates(outcomes, block, reps, seed), [tail, 1 - tail])
    return float(low), float(high)


def block_interval(
    outcomes: np.ndarray, block: int = BLOCK, reps: int = REPS, seed: int = 0, level: float = 0.95
) -> tuple[float, float, float]:
    """(low, high, effective judgements): Clopper-Pearson on the judgements over the design
    effect (module docstring; an effect below 1 counts as 1)."""
    judged = outcomes[~np.isnan(outcomes)]
    n, rate = judged.size, float(judged.mean())
    binomial = rate * (1 - rate) / n
    spread = float(np.var(resampled_rates(outcomes, block, reps, seed)))
    n_eff = n / max(1.0, spread / binomial) if binomial > 0 else float(n)
    return (*clopper_pearson(rate * n_eff, n_eff, level), n_eff)
