"""One row's launches: the variance of a launch's value, its within- and between-launch parts,
and the prior that rows of one kind lend each other (empirical Bayes).

A launch's value of a row is one number (its time_us_min, p50, ... in log terms: `y`). Two
launches of unchanged code differ by two things:

- within: the sampling noise of the statistic over that launch's trials (a launch with 3 trials
  has a noisier p50 than one with 12). Estimated from the launch's own trial units by a
  bootstrap of the statistic (`within_variance`).
- between: what moves every trial of a launch alike: process placement, the load of the box
  during those seconds, clocks. Only launches show it; on a shared 2-core box it is most of the
  spread (docs/gate.md).

The variance of a launch's value is their sum. With several launches it is estimated directly
(`pooled_variance`: the spread of launch values around their side's mean), which holds both.

A young window has few launches per row, and a variance from 3 values is a guess. Rows of one
kind (one primitive, one size band) are noisy alike, so each row borrows from the others the way
limma does for gene expression (Smyth 2004, "Linear models and empirical Bayes methods for
assessing differential expression in microarray experiments"): the rows' sample variances are
fitted by a scaled inverse chi-square prior (s0^2, d0) by the moments of their logs
(`fit_prior`), and each row's variance becomes (d0 s0^2 + d s^2) / (d0 + d) with d0 + d degrees
of freedom (`Prior.squeeze`). A quiet row stays quiet, a noisy one noisy, and a 3-launch row is
usable.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

BOOTSTRAP_REPLICATES = 200
"""Replicates of a launch's statistic over its trials (within_variance): the variance of 200
draws is within +-10 % of the bootstrap's own at 95 %, which is far inside its use (a floor and
a part of the default prior)."""
MAX_PRIOR_DF = 1e6
"""d0 when the rows' variances scatter no more than chi-square allows: one shared variance."""


@dataclass(frozen=True)
class LaunchValue:
    """One launch's value of one row (or of one band: the mean of its rows' y)."""

    y: float
    """log of the metric in time terms (a bandwidth's log is negated): larger is slower."""
    within: float
    """Sampling variance of y from the launch's own trials (bootstrap); nan when unknown."""
    launch: str
    """Which launch (a run directory, or night/launch-N)."""
    night: str
    """Which night it belongs to (its run directory for a single launch)."""


@dataclass(frozen=True)
class Prior:
    """A scaled inverse chi-square prior for a launch value's variance: s0^2 with d0 degrees of
    freedom, and where it came from (printed beside every verdict that leans on it)."""

    variance: float
    """s0^2, in log units squared."""
    df: float
    """d0: how many launches' worth of evidence the prior carries (0: none)."""
    source: str
    """'estimated from 96 rows of this comparison', 'default for gloo on a shared 2-core box'."""

    def squeeze(self, variance: float, df: float) -> tuple[float, float]:
        """The posterior variance and its degrees of freedom: (d0 s0^2 + d s^2) / (d0 + d)."""
        if df <= 0 or not math.isfinite(variance):
            return self.variance, self.df
        if self.df <= 0:
            return variance, df
        if self.df >= MAX_PRIOR_DF:
            return self.variance, self.df
        total = self.df + df
        return (self.df * self.variance + df * variance) / total, total


def within_variances(
    units: Sequence[Sequence[float]], statistic: Callable[..., np.ndarray], seed: int = 0
) -> list[float]:
    """For each launch's trial units (times, > 0): the bootstrap variance of log(statistic)
    over them, trials drawn with replacement BOOTSTRAP_REPLICATES times, seeded (a report is
    reproducible). `statistic` reduces an axis (np.min, np.median, np.mean). nan with fewer than
    2 units. Launches with as many units share one draw of indices: one array operation each."""
    clean = [usable_units(unit) for unit in units]
    out = [math.nan] * len(clean)
    by_length: dict[int, list[int]] = {}
    for i, values in enumerate(clean):
        if len(values) >= 2:
            by_length.setdefault(len(values), []).append(i)
    rng = np.random.default_rng(seed)
    for length, members in sorted(by_length.items()):
        picks = rng.integers(0, length, size=(BOOTSTRAP_REPLICATES, length))
        stacked = np.stack([clean[i] for i in members])  # launches x units
        for i, variance in zip(members, log_spreads(stacked[:, picks], statistic), strict=True):
            out[i] = variance
    return out


def usable_units(units: Sequence[float]) -> np.ndarray:
    """A launch's trial units that can be timed: positive and finite."""
    return np.asarray([u for u in units if u > 0 and math.isfinite(u)], float)


def log_spreads(drawn: np.ndarray, statistic: Callable[..., np.ndarray]) -> list[float]:
    """launches x replicates x units, drawn with replacement -> each launch's variance of
    log(statistic) over its replicates."""
    return [float(v) for v in np.var(np.log(statistic(drawn, axis=-1)), axis=1, ddof=1).tolist()]


def within_variance(
    units: Sequence[float], statistic: Callable[..., np.ndarray], seed: int = 0
) -> float:
    """within_variances of one launch."""
    return within_variances([units], statistic, seed)[0]


def seeded_within_variances(
    requests: Sequence[tuple[Sequence[float], Callable[..., np.ndarray], int]],
) -> list[float]:
    """within_variance(units, statistic, seed) of each request, the same numbers, as array
    operations: launches of one statistic and unit count are drawn together, each with the
    indices its own seed draws (one draw per seed and count, shared by the launches of a row).
    compare judges 10,000 rows: one call each cost ~2 s."""
    out = [math.nan] * len(requests)
    groups: dict[tuple[Callable[..., np.ndarray], int], list[tuple[int, np.ndarray, int]]] = {}
    for i, (units, statistic, seed) in enumerate(requests):
        values = usable_units(units)
        if len(values) >= 2:
            groups.setdefault((statistic, len(values)), []).append((i, values, seed))
    draws: dict[tuple[int, int], np.ndarray] = {}

    def draw(seed: int, length: int) -> np.ndarray:
        if (seed, length) not in draws:
            rng = np.random.default_rng(seed)
            draws[seed, length] = rng.integers(0, length, size=(BOOTSTRAP_REPLICATES, length))
        return draws[seed, length]

    for (statistic, length), members in groups.items():
        picks = np.stack([draw(seed, length) for _i, _values, seed in members])
        stacked = np.stack([values for _i, values, _seed in members])  # launches x units
        drawn = np.take_along_axis(stacked[:, None, :], picks, axis=-1)
        for (i, _values, _seed), variance in zip(
            members, log_spreads(drawn, statistic), strict=True
        ):
            out[i] = variance
    return out


def pooled_variance(sides: Sequence[Sequence[float]]) -> tuple[float, int]:
    """The spread of launch values around their own side's mean, pooled over the sides: the
    sample variance of one launch's value and its degrees of freedom (launches - sides)."""
    squares, df = 0.0, 0
    for values in sides:
        if len(values) >= 2:
            mean = math.fsum(values) / len(values)
            squares += math.fsum((v - mean) ** 2 for v in values)
            df += len(values) - 1
    return (squares / df if df else math.nan), df


def trigamma_inverse(x: float) -> float:
    """y with trigamma(y) = x (limma's trigammaInverse: Newton's method on 1/trigamma)."""
    if x > 1e7:
        return 1.0 / math.sqrt(x)
    if x < 1e-6:
        return 1.0 / x
    y = 0.5 + 1.0 / x
    for _ in range(50):
        tri = float(special.polygamma(1, y))
        step = tri * (1 - tri / x) / float(special.polygamma(2, y))
        y += step
        if -step / y < 1e-8:
            break
    return y


def fit_prior(variances: Sequence[float], dfs: Sequence[float], source: str) -> Prior | None:
    """The scaled inverse chi-square prior that best fits these sample variances (each with its
    degrees of freedom), by the moments of their logs (limma's fitFDist). None with fewer than
    3 usable rows. A d0 of MAX_PRIOR_DF says the rows scatter as one variance would."""
    pairs = [(v, d) for v, d in zip(variances, dfs, strict=True) if d > 0 and v > 0]
    if len(pairs) < 3:
        return None
    s2 = np.array([v for v, _d in pairs])
    d = np.array([d for _v, d in pairs], dtype=float)
    e = np.log(s2) - special.digamma(d / 2) + np.log(d / 2)
    mean = float(np.mean(e))
    spread = float(np.var(e, ddof=1)) - float(np.mean(special.polygamma(1, d / 2)))
    if spread <= 0:
        return Prior(float(math.exp(mean)), MAX_PRIOR_DF, source)
    d0 = 2 * trigamma_inverse(spread)
    s0 = math.exp(mean + float(special.digamma(d0 / 2)) - math.log(d0 / 2))
    return Prior(s0, d0, source)
