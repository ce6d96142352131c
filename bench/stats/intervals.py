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
  trials' own shares (each trial one unit). The interval is the pooled ops' quantiles at
  1/2 -+ c x that standard error (`clustered_median_interval`). It is centred on the row's own
  p50, it needs no assumption on how ops or trials are distributed, and it needs 6 trials at
  least, as the median of one sample a trial does (MIN_CLUSTER_TRIALS; and more when trials
  disagree: with too few, the quantiles would fall off the ends of the data, and there is no
  interval).

  Consecutive trials are not independent on a real box: its load drifts, so a slow trial is
  followed by slow ones (the shares of the recorded latency launches have a lag-1 correlation of
  0.4-0.8). A variance that takes the trials as independent was too small: resampled in runs of
  consecutive recorded trials, the interval held the p50 76-80 % of the time. So the shares'
  variance is a long-run one, in the trials' recorded order (`long_run_variance`): Newey and
  West's, Bartlett weights 1 - j/M on the lag-j autocovariances, bandwidth M = max(2, 0.3 T)
  trials. Such a variance is itself uncertain, and more so the larger M is; Kiefer and Vogelsang
  (2005, "A new asymptotic theory for heteroskedasticity-autocorrelation robust tests") give the
  critical value for a bandwidth that is a fixed share b = M / T of the trials: c = t(T - 1) x
  cv(b) / z, cv(b) the fixed-b quantile (`fixed_b_factor`; with b -> 0 it is z, the t factor
  keeps the small-T correction of the independent case). The bandwidth and its share were
  chosen on two of the four recorded latency launches and checked on the other two
  (docs/measurement.md#coverage-of-the-printed-intervals). What no interval over one launch's
  trials can see is drift slower than all of them: a launch spent in one quiet stretch looks
  precise.

Both are computed on the per-sample maximum over ranks, the same samples as the row's p50.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise
from statistics import NormalDist

CONFIDENCE = 0.95
"""Coverage of the p50's confidence interval (ci_low_us, ci_high_us)."""
PRECISION_CONFIDENCE = 0.99
"""--precision's look for rows of one sample a trial (throughput mode): it stops when the p50's
interval at this level is within +-P at three looks in a row (stats/stopping.py precision_met).
Looking after every trial and stopping at the first narrow interval picks the trials that happened
to agree: deciding on the 95 % interval itself, 16.5 % of the rows declared converged at +-10 %
were further than 10 % from the truth (ci/bench_stats_intervals.py, recorded latency trials);
deciding at 99 %, 4-10 % with exchangeable trials (7.7 +- 1.5 % over 3,000 rows), and 45-47 % of
the few rows that converge while the box drifts between trials; with three looks in a row
0.8-1.9 % and 34 % (docs/measurement.md#coverage-of-the-printed-intervals). The printed 95 %
interval of a converged row is within +-P too. Latency rows (several samples a trial) stop on
their confidence sequence instead (sequence.py), which a stop chosen by looking cannot fool."""


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


MIN_CLUSTER_TRIALS = 6
"""The fewest trials that get a latency row's (Woodruff's) interval. Its standard error comes
from the trials' own shares, and with 5 of them the interval exists only where they happen to
agree (52-77 % of resampled rows), which is where that error is underestimated: in recorded order
the interval held the p50 89.4 % of the time beside a bursting process (--order grouped) and 83 %
sequentially. 6 is the fewest at which one sample a trial gets an interval too (5 trials hold the
median 93.75 % at most, whatever the rule): chosen so on the 2026-12-05 grouped recordings (6
trials: 92.8-95.7 %) and checked on launches recorded after the choice (94.9 % quiet, 94.7 %
beside the burst; docs/measurement.md#coverage-of-the-printed-intervals). --precision's sequence
has its own minimum (sequence.py)."""


def clustered_median_interval(
    trials: Sequence[Sequence[float]], confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """Woodruff's interval for the median of every sample, the trials as units (module
    docstring); (nan, nan) with fewer than MIN_CLUSTER_TRIALS trials, or when the quantiles it
    needs fall outside the data (too few trials for how much they disagree)."""
    sizes = [len(trial) for trial in trials if trial]
    if len(sizes) < MIN_CLUSTER_TRIALS:
        return math.nan, math.nan
    pooled = sorted(value for trial in trials for value in trial)
    total = len(pooled)
    median = percentile(pooled, 50)
    # Each trial's share of samples below the p50 (ties count half): their size-weighted mean is
    # the pooled share, whose standard error comes from the trials' spread around it.
    below = [
        (sum(v < median for v in trial) + 0.5 * sum(v == median for v in trial))
        for trial in trials
        if trial
    ]
    share = sum(below) / total
    units = len(sizes)
    # Each trial's miss from its share, in the trials' order: their sum's long-run variance.
    variance, bandwidth_share = long_run_variance(
        [b - share * n for b, n in zip(below, sizes, strict=True)]
    )
    se = math.sqrt(variance) / total
    if se == 0:  # every trial split exactly at the p50: fall back on independent samples
        se = math.sqrt(share * (1 - share) / total)
    critical = t_quantile(0.5 + confidence / 2, units - 1) * fixed_b_factor(
        bandwidth_share, confidence
    )
    reach = critical * se
    if share - reach < 0 or share + reach > 1:
        return math.nan, math.nan
    return percentile(pooled, 100 * (share - reach)), percentile(pooled, 100 * (share + reach))


BANDWIDTH_SHARE = 0.3
"""The long-run variance's bandwidth, as a share of the trials (module docstring): M = max(2,
0.3 T) trials, 3.6 at 12 trials, 9 at 30. Chosen on the latency launches lat1 and lat2 of
tests/data/interval-trials.json among M = 2, 3, 4, 5, 0.25 T, 0.3 T, 0.5 T and T (and an AR(1)
inflation, batch means, a cosine series): the best coverage in recorded order with the
independent cases still within 92-98 %."""
MIN_BANDWIDTH = 2.0
"""At least the lag-1 autocovariance counts (weight 1/2), at any number of trials."""
FIXED_B = {
    0.90: (1.6449, 1.9530, 0.7953, -0.6384),
    0.95: (1.9600, 2.8411, 0.6970, -0.7363),
    0.99: (2.5758, 5.2358, 0.4207, -1.1659),
}
"""Bartlett kernel, fixed-b two-sided critical values cv(b) = z + c1 b + c2 b^2 + c3 b^3, per
confidence: (z, c1, c2, c3). Fitted to the simulated quantiles of |t| over 80,000 series of 250
independent normals at b = 0.05 ... 1 (`python ci/bench_fixed_b.py` reproduces them; the fit is
within 0.02, 0.02 and 0.05 of the simulation). Kiefer and Vogelsang's (2005) published 95 %
polynomial, 1.96 + 2.9694 b + 0.4160 b^2 - 0.5324 b^3, is within 0.04 of the 95 % one (0.05 at
b = 1)."""


def long_run_variance(misses: Sequence[float]) -> tuple[float, float]:
    """(variance of the sum of `misses`, the bandwidth's share b = M / T): Newey and West's
    Bartlett estimate over the misses in their order (mean zero: each trial's count below the
    p50 minus its share of it), bandwidth M = max(MIN_BANDWIDTH, BANDWIDTH_SHARE x T), scaled by
    T / (T - 1) as the independent case's variance is; b is at most 1."""
    units = len(misses)
    bandwidth = max(MIN_BANDWIDTH, BANDWIDTH_SHARE * units)
    total = math.fsum(m * m for m in misses)
    lag = 1
    while lag < min(bandwidth, units):
        covariance = math.fsum(misses[i] * misses[i + lag] for i in range(units - lag))
        total += 2 * (1 - lag / bandwidth) * covariance
        lag += 1
    return units / (units - 1) * max(total, 0.0), min(bandwidth / units, 1.0)


def fixed_b_factor(share: float, confidence: float = CONFIDENCE) -> float:
    """cv(b) / z: how much wider than the normal quantile the fixed-b critical value of a
    Bartlett long-run variance with bandwidth share b is (FIXED_B); between the tabled
    confidences the factor is interpolated linearly, outside them the nearest is used."""
    levels = sorted(FIXED_B)

    def factor(level: float) -> float:
        z, c1, c2, c3 = FIXED_B[level]
        return (z + c1 * share + c2 * share**2 + c3 * share**3) / z

    if confidence <= levels[0]:
        return factor(levels[0])
    for low, high in pairwise(levels):
        if confidence <= high:
            weight = (confidence - low) / (high - low)
            return (1 - weight) * factor(low) + weight * factor(high)
    return factor(levels[-1])


def trial_interval(
    samples: Sequence[float], trials: int, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """The p50's interval with the trial as the unit: `samples` in trial-major order, `trials`
    equal runs of them (one sample each: median_interval; several: the clustered interval)."""
    runs = trial_runs(samples, trials)
    if len(runs[0]) == 1:
        return median_interval(sorted(samples), confidence)
    return clustered_median_interval(runs, confidence)


def trial_runs(samples: Sequence[float], trials: int) -> list[Sequence[float]]:
    """`samples` in trial-major order as `trials` equal runs, one a trial."""
    if trials <= 0 or len(samples) % trials:
        raise ValueError(f"{len(samples)} samples do not split into {trials} equal trials")
    per_trial = len(samples) // trials
    return [samples[i * per_trial : (i + 1) * per_trial] for i in range(trials)]


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
