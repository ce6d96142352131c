"""Confidence intervals for a row's p50 with the trial as the unit, and the Student t quantiles
they (and the fit) need. Pure Python: the rank side (--precision) imports it, and neither scipy
nor numpy is on its path.

Why the trial is the unit: the ops of one trial share the moment they ran in (the box's load,
a preemption, the caches), so in latency mode, where a trial holds `iters` single-op samples,
ops of one trial resemble each other more than ops of different trials. An interval that counts
every op as independent is far too narrow: on a real 30-trial gloo run it was +-4.4 % against
+-16.2 % over the trials, and in simulation it covered 41-56 % of the time, not 95 %
(docs/measurement.md#coverage-of-the-printed-intervals). Here:

- one sample per trial (throughput mode, where a sample is the mean of a trial's ops; or a latency
  trial of one op): the order-statistic interval of a median (`median_interval`), the binomial
  interval of Conover's Practical Nonparametric Statistics 3.2, interpolated between neighbouring
  order statistics as Hettmansperger and Sheather (1986, "Confidence intervals based on
  interpolated order statistics") do, so that it covers 95 %, not the 96-99 % that the
  discreteness of the binomial gives at 6-12 samples. It needs 6 samples (5 cover 93.75 % at
  most).
- several samples per trial (latency mode): Woodruff's interval for a quantile of clustered data
  (Woodruff 1952, "Confidence intervals for medians and other position measures"; the survey
  statistician's interval for a median over clusters). The row's p50 is the median of all its
  ops; the share of ops below it is an average over trials, whose standard error comes from the
  trials' own shares (each trial one unit, T - 1 degrees of freedom). The interval is the pooled
  ops' quantiles at 1/2 -+ t(T - 1) x that standard error (`clustered_median_interval`). It is
  centred on the row's own p50, it needs no assumption on how ops or trials are distributed, and
  it needs 2 trials at least (and more when trials disagree: with too few, the quantiles would
  fall off the ends of the data, and there is no interval).

Both are computed on the per-sample maximum over ranks, the same samples as the row's p50.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from statistics import NormalDist

CONFIDENCE = 0.95
"""Coverage of the p50's confidence interval (ci_low_us, ci_high_us)."""
PRECISION_CONFIDENCE = 0.99
"""--precision stops when the p50's interval at this level is within +-P (comm/precision.py).
Looking after every trial and stopping at the first narrow interval picks the trials that
happened to agree: deciding on the 95 % interval itself, 16.5 % of the rows declared converged
at +-10 % were further than 10 % from the truth (ci/bench_stats_intervals.py, recorded latency
trials); deciding at 99 %, 4.3 +- 1.9 % (docs/measurement.md#coverage-of-the-printed-intervals),
and the printed 95 % interval of a converged row is within +-P too."""


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) of already sorted values, linear interpolation (numpy's
    default, 'linear'): the p50 of an even number of samples is the mean of the middle two."""
    if not sorted_values:
        raise ValueError("percentile of no samples")
    position = (len(sorted_values) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    fraction = position - low
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * fraction


def median_ci_ranks(n: int, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """1-based ranks (k, n + 1 - k) of the order-statistic interval of the median of n samples
    with coverage >= `confidence`, the narrowest such; None when even min..max covers less
    (n < 6 at 95 %). Exact binomial sums in integers."""
    total = 1 << n  # 2^n equally likely sign patterns around the true median
    allowed = (1 - confidence) / 2 * total  # P(B <= k - 1) may be at most this much
    tail, k = 0, 0
    while True:
        tail += math.comb(n, k)  # P(B <= k) * 2^n
        if tail > allowed or k + 1 > n - k:
            break
        k += 1
    return (k, n + 1 - k) if k >= 1 else None


def order_coverage(n: int, k: int) -> float:
    """Coverage of [x_(k), x_(n+1-k)] for the median of n samples: P(k <= B <= n - k),
    B ~ Binomial(n, 1/2)."""
    if k < 1 or k > n - k:
        return 0.0
    inside = sum(math.comb(n, j) for j in range(k, n - k + 1))
    return inside / (1 << n)


def median_interval(
    sorted_values: Sequence[float], confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """The interpolated order-statistic interval of the median of independent samples (module
    docstring), from already sorted values; (nan, nan) below 6 samples at 95 %."""
    n = len(sorted_values)
    ranks = median_ci_ranks(n, confidence)
    if ranks is None:
        return math.nan, math.nan
    k = ranks[0]
    low, high = sorted_values[k - 1], sorted_values[n - k]
    if k + 1 > n - k:  # no narrower interval to interpolate towards
        return low, high
    wide, narrow = order_coverage(n, k), order_coverage(n, k + 1)
    share = (wide - confidence) / (wide - narrow)  # 0: the wide pair is exact, 1: the narrow one
    weight = (n - k) * share / (k + (n - 2 * k) * share)
    low += weight * (sorted_values[k] - sorted_values[k - 1])
    high -= weight * (sorted_values[n - k] - sorted_values[n - k - 1])
    return low, high


def clustered_median_interval(
    trials: Sequence[Sequence[float]], confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """Woodruff's interval for the median of every sample, the trials as units (module
    docstring); (nan, nan) with fewer than two trials, or when the quantiles it needs fall
    outside the data (too few trials for how much they disagree)."""
    sizes = [len(trial) for trial in trials if trial]
    if len(sizes) < 2:
        return math.nan, math.nan
    pooled = sorted(value for trial in trials for value in trial)
    total = len(pooled)
    median = percentile(pooled, 50)
    # Each trial's share of samples below the p50 (ties count half): their size-weighted mean is
    # the pooled share, whose standard error comes from the trials' spread around it.
    below = [
        (sum(v < median for v in trial) + 0.5 * sum(v == median for v in trial)) for trial in trials
    ]
    share = sum(below) / total
    units = len(sizes)
    spread = sum((b - share * n) ** 2 for b, n in zip(below, sizes, strict=True))
    se = math.sqrt(units / (units - 1) * spread) / total
    if se == 0:  # every trial split exactly at the p50: fall back on independent samples
        se = math.sqrt(share * (1 - share) / total)
    reach = t_quantile(0.5 + confidence / 2, units - 1) * se
    if share - reach < 0 or share + reach > 1:
        return math.nan, math.nan
    return percentile(pooled, 100 * (share - reach)), percentile(pooled, 100 * (share + reach))


def trial_interval(
    samples: Sequence[float], trials: int, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """The p50's interval with the trial as the unit: `samples` in trial-major order, `trials`
    equal runs of them (one sample each: median_interval; several: the clustered interval)."""
    if trials <= 0 or len(samples) % trials:
        raise ValueError(f"{len(samples)} samples do not split into {trials} equal trials")
    per_trial = len(samples) // trials
    if per_trial == 1:
        return median_interval(sorted(samples), confidence)
    chunks = [samples[i * per_trial : (i + 1) * per_trial] for i in range(trials)]
    return clustered_median_interval(chunks, confidence)


@lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t distribution with `df` degrees of freedom (df > 0; inf:
    the normal), by bisection on its distribution function (regularized incomplete beta).
    Remembered: a report's ~800 fits ask for a handful of (p, df), ~0.4 ms of bisection each."""
    if not 0 < p < 1 or not df > 0:
        raise ValueError(f"t quantile needs 0 < p < 1 and df > 0, got p={p}, df={df}")
    if math.isinf(df):
        return NormalDist().inv_cdf(p)
    if p < 0.5:
        return -t_quantile(1 - p, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        high *= 2
    for _ in range(200):
        mid = (low + high) / 2
        if t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low <= 1e-12 * max(1.0, high):
            break
    return (low + high) / 2


def t_cdf(x: float, df: float) -> float:
    """P(T <= x) for Student's t with `df` degrees of freedom."""
    tail = 0.5 * regularized_beta(df / (df + x * x), df / 2, 0.5)
    return 1 - tail if x > 0 else tail


def regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b) by its continued fraction (modified Lentz), on the side where it converges."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1 - regularized_beta(1 - x, b, a)
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    return math.exp(log_front) / a * _beta_fraction(x, a, b)


def _beta_fraction(x: float, a: float, b: float) -> float:
    """The continued fraction of the incomplete beta (Numerical Recipes' betacf)."""
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1) < 1e-15:
            break
    return result
