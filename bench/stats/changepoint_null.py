"""The null distribution of history's change-point statistic (the largest |t| over the nights of
a window, changepoint_model.profile), by simulation from the noise model itself.

    pool = NullPool.simulate(60, launches=False)
    p = pool.p_values(T, phi_hat, window_length)

Why simulate: the largest of ~54 correlated t's is not a t, and with phi estimated from 60
nights its tail depends on how wrong phi-hat may be. A parametric sieve bootstrap (Buhlmann
1997) keeps the autocorrelation; a plug-in one, simulated at phi-hat alone, over-rejects (while
building it, on a prototype of this statistic: 6.9 % false alarms at 5 % with phi = 0.5, 8.9 %
at 0.8), because a series whose phi is underestimated gets both a larger statistic and a
narrower null.

So the draws span phi over [0, DRAW_MAX] (uniform), each draw's phi is estimated as the data's
is, and a series' p-value counts only the draws whose estimated phi falls in its own bin of
PHI_BIN: the null of T among series that looked like this one. A pool serves every series of
one length (its windows: prefixes of lengths n, n / 1.5, ...), with or without launch noise
(a share of the variance drawn over [0, 0.9], known to the estimator as the data's is).

The same draws give the null of a phi pooled over a history's series (changepoint_pool), in
cells of their own (bin_of's `known`): each draw judged at the phi a history of POOL_MIN series
with its true phi would pool to (pooled_phi), binned by that phi.

Each draw also keeps its |t| at one night drawn uniformly among those a step may start at
(FIXED, the last column): the null of a step tested at a night chosen by something else, a
primitive's rows stepping together (changepoint_group), not by the series' own maximum.

Every draw goes through what a series does (changepoint_model.normal_scores, estimate_noise,
profile), so the null is that of the statistic as computed.

The tail beyond the draws: the exceedances of T over the cell's 90th percentile are fitted by
an exponential (fitting the tail of permutation maxima, as Knijnenburg et al. 2009 do), so a
p-value of 1e-4, which Benjamini-Hochberg over 500 series needs, costs no million draws. Why
exponential in T and not in T^2 (a Gaussian maximum's tail): with phi estimated, T is a scale
mixture, heavier than Gaussian; checked against 200,000 draws of 60 nights, the T^2 fit from a
cell's ~1,000 draws put p = 4.6e-4 (BH's first threshold over 108 series) at 0.8e-4 to 2e-3,
the T fit at 3.6e-4 to 1.2e-3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from distbench.stats.changepoint_model import (
    DRAW_MAX,
    MIN_SIZE,
    PHI_MAX,
    WHITE_MAX,
    best_split,
    calibration,
    estimate_noise,
    profile,
    refined,
    simulated,
)
from distbench.stats.changepoint_pool import AGREE, POOL_MIN

NULL_VERSION = 7
"""Bump when the statistic or its simulation changes: a cached pool of another version is not
read (reports/history/cache.py keeps pools)."""
PHI_BIN = 0.05
"""Width of the bins of estimated phi a p-value is read in."""
BINS = round(PHI_MAX / PHI_BIN)
MIN_CELL = 300
"""Draws a bin must hold; a thinner one borrows its neighbours' (near phi = 0.95, long series)."""
TAIL = 0.10
"""Share of a cell above which the exponential tail model replaces the draws."""
WINDOW_RATIO = 1.5
"""Window lengths of a pool: n, n / 1.5, ... down to 2 MIN_SIZE; a part of a series is read
in the smallest window at least as long (conservative: more positions to maximise over)."""
DRAWS = 20_000
MAX_WORK = 1_500_000
"""Draws x nights per pool at most: 20,000 draws up to 75 nights, fewer beyond (at least 4,000),
where phi-hat is sharper and the tail model carries the small p-values."""


def windows(n: int) -> list[int]:
    """A pool's window lengths, longest first."""
    out = [n]
    while math.ceil(out[-1] / WINDOW_RATIO) >= 2 * MIN_SIZE and out[-1] > 2 * MIN_SIZE:
        out.append(math.ceil(out[-1] / WINDOW_RATIO))
    return out


WHITE_BINS = 3
"""Bins of the launch-noise share (of a pool with launches): the null depends on it too."""


KNOWN = BINS * WHITE_BINS
"""Cells from KNOWN on are those of a phi pooled over a history's series (bin_of's `known`)."""


def bin_of(
    phi: np.ndarray, white: np.ndarray | float = 0.0, known: np.ndarray | bool = False
) -> np.ndarray:
    """A series' cell: its bin of phi, plus BINS x its bin of launch-noise share, plus KNOWN
    where its phi is a history's pooled one rather than its own estimate."""
    phi_bin = np.minimum((np.asarray(phi) / PHI_BIN).astype(int), BINS - 1)
    white_bin = np.minimum((np.asarray(white) / WHITE_MAX * WHITE_BINS).astype(int), WHITE_BINS - 1)
    return phi_bin + BINS * white_bin + KNOWN * np.asarray(known, dtype=int)


FIXED = -1
"""The window key of the fixed-night column (NullPool.cell)."""


def columns(n: int) -> int:
    """A pool's columns: one per window, then the fixed night's."""
    return len(windows(n)) + 1


def draws_for(n: int) -> int:
    return int(min(DRAWS, max(4_000, MAX_WORK // n)))


@dataclass(frozen=True)
class NullPool:
    """Simulated statistics: T (draws x windows) and each draw's bin of estimated phi."""

    n: int
    launches: bool
    stats: np.ndarray
    bins: np.ndarray
    cells: dict[tuple[int, int], np.ndarray] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def simulate(cls, n: int, launches: bool, seed: int = 0) -> NullPool:
        """Draws of the statistic of a series of n nights with no change (module docstring)."""
        rng = np.random.default_rng([seed, n, int(launches)])
        count = draws_for(n)
        phi = rng.uniform(0.0, DRAW_MAX, count)
        share = rng.uniform(0.0, WHITE_MAX, count) if launches else np.zeros(count)
        y, white = simulated(rng, phi, share, n)
        noise = estimate_noise(y, white)
        known = refined(y, best_split(y, noise), white, pooled_phi(n, launches, phi, rng))
        stats = np.empty((2 * count, columns(n)), dtype=np.float32)
        at = rng.integers(MIN_SIZE, n - MIN_SIZE + 1, count) - 1  # profile's column of night k
        for j, m in enumerate(windows(n)):
            for half, fitted in enumerate((noise, known)):
                t_stat, _ = profile(y[:, :m], fitted)
                stats[half * count : (half + 1) * count, j] = np.abs(t_stat).max(axis=1)
                if j == 0:
                    fixed = np.abs(t_stat[np.arange(count), at])
                    stats[half * count : (half + 1) * count, FIXED] = fixed
        bins = [bin_of(noise.phi, noise.white), bin_of(known.phi, known.white, known=True)]
        return cls(n, launches, stats, np.concatenate(bins))

    def cell(self, key: int, window: int) -> np.ndarray:
        """The sorted draws of T read for this cell (bin_of) and a window of `window` nights
        (FIXED: the draws' |t| at a night given in advance, the whole series): the cell's draws,
        widened to the neighbouring phi bins until MIN_CELL."""
        if window == FIXED:
            j = self.stats.shape[1] - 1
        else:
            j = max(i for i, m in enumerate(windows(self.n)) if m >= min(window, self.n))
        if (key, j) in self.cells:
            return self.cells[key, j]
        phi_bins, white_bins = self.bins % BINS, self.bins // BINS
        same = white_bins == key // BINS  # the same share of launch noise, and known or not
        low = high = key % BINS
        while np.count_nonzero(same & (phi_bins >= low) & (phi_bins <= high)) < MIN_CELL and (
            low > 0 or high < BINS - 1
        ):
            low, high = max(low - 1, 0), min(high + 1, BINS - 1)
        chosen = same & (phi_bins >= low) & (phi_bins <= high)
        self.cells[key, j] = np.sort(self.stats[chosen, j].astype(float))
        return self.cells[key, j]

    def p_values(
        self, t: np.ndarray, phi: np.ndarray, white: np.ndarray, window: np.ndarray,
        known: np.ndarray | bool = False,
    ) -> np.ndarray:  # fmt: skip
        """P(T >= t) under the null of each series' cell and window length (`known`: its phi
        is its history's pooled one)."""
        t, window = np.asarray(t, float), np.asarray(window)
        out = np.ones(len(t))
        keys = np.stack([bin_of(phi, white, known), window], axis=1)
        for key in np.unique(keys, axis=0):
            rows = (keys == key).all(axis=1)
            out[rows] = survival(self.cell(int(key[0]), int(key[1])), t[rows])
        return out

    def p_fixed(
        self, t: np.ndarray, phi: np.ndarray, white: np.ndarray, known: np.ndarray | bool = False
    ) -> np.ndarray:
        """P(|t| >= t) for a step at a night given in advance, over the whole series (module
        docstring), in each series' cell."""
        window = np.full(len(np.asarray(t)), FIXED)
        return self.p_values(t, phi, white, window, known)

    def critical_fixed(self, alpha: float, phi: float, white: float, known: bool = False) -> float:
        """The |t| a step at a night given in advance must pass at level alpha."""
        key = int(bin_of(np.array([phi]), white, known)[0])
        return quantile(self.cell(key, FIXED), alpha)

    def critical(
        self, alpha: float, phi: float, white: float, window: int, known: bool = False
    ) -> float:
        """The t a window's maximum must pass at level alpha."""
        key = int(bin_of(np.array([phi]), white, known)[0])
        return quantile(self.cell(key, window), alpha)


def pooled_phi(n: int, launches: bool, true: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The phi that a history of POOL_MIN series, each drifting with a draw's `true` phi, pools
    to (changepoint_pool): the median fitted phi at that phi (changepoint_pool.calibration) plus
    the error of a median of POOL_MIN fitted phi (their sd x 1.25 / sqrt(POOL_MIN)). The fewest
    series the rule pools: a history of more pools a sharper phi, and its null is conservative
    (docs/history.md measures by how much)."""
    centres, medians, spreads = calibration(n, launches)
    spread = np.interp(true, centres, spreads)
    error = spread * np.sqrt(1.2533**2 / POOL_MIN + AGREE)
    return np.interp(true, centres, medians) + error * rng.standard_normal(len(true))


def tail_fit(draws: np.ndarray) -> tuple[float, float]:
    """(u, s): P(T > t) = TAIL exp(-(t - u) / s) beyond u, the (1 - TAIL) quantile: s is the
    exceedances' mean excess."""
    u = float(draws[int((1 - TAIL) * len(draws))])
    excess = draws[draws > u] - u
    return u, max(float(excess.mean()), 1e-6) if len(excess) else 1.0


def survival(draws: np.ndarray, t: np.ndarray) -> np.ndarray:
    """(1 + draws >= t) / (draws + 1); the tail model where fewer than 10 draws reach t."""
    above = len(draws) - np.searchsorted(draws, t, side="left")
    empirical = (1 + above) / (len(draws) + 1)
    u, s = tail_fit(draws)
    model = TAIL * np.exp(-(np.maximum(t, u) - u) / s)
    return np.where(above >= 10, empirical, model)


def quantile(draws: np.ndarray, alpha: float) -> float:
    """The t with P(T >= t) = alpha (survival's inverse)."""
    if alpha * (len(draws) + 1) >= 11:
        return float(draws[min(math.ceil((1 - alpha) * (len(draws) + 1)) - 1, len(draws) - 1)])
    u, s = tail_fit(draws)
    return u + s * math.log(TAIL / alpha)


_POOLS: dict[tuple[int, bool, int], NullPool] = {}


def pool_for(n: int, launches: bool, seed: int = 0) -> NullPool:
    """The pool of series of n nights, simulated once per process."""
    key = (n, launches, seed)
    if key not in _POOLS:
        _POOLS[key] = NullPool.simulate(n, launches, seed)
    return _POOLS[key]
