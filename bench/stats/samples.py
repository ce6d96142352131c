"""Statistics over timing samples. The Stats object keeps the raw samples; every figure derives
from them, so a CSV row can always be recomputed from samples.csv.

Percentiles use linear interpolation between closest ranks (numpy's default, 'linear'), so the
p50 of an even number of samples is the mean of the middle two.

p95 and p99 are tail latencies only where each sample is one operation (latency mode). A
throughput sample is the mean of `iters` back-to-back operations; over a handful of trials its
p95/p99 are nearly the maximum trial mean, not a tail of anything, so those rows leave them empty.

The confidence interval of the p50 is the distribution-free order-statistic interval for a median
(the binomial interval, e.g. Conover, Practical Nonparametric Statistics, 3.2): with n samples
sorted, [x_(k), x_(n+1-k)] (1-based) holds the true median with probability
1 - 2 P(Binomial(n, 1/2) <= k - 1); k is the largest with that >= 95 %. It assumes nothing about
the shape of the timing distribution (which is skewed: a few slow trials), and it exists from
n = 6 samples on (n = 5: the widest interval, min..max, covers only 93.75 %).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

CONFIDENCE = 0.95
"""Coverage of the p50's confidence interval (ci_low_us, ci_high_us)."""


def median_ci_ranks(n: int, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """1-based ranks (k, n + 1 - k) of the order-statistic interval of the median of n samples
    with coverage >= `confidence` (module docstring), the narrowest such; None when even
    min..max covers less (n < 6 at 95 %). Exact binomial sums in integers."""
    total = 1 << n  # 2^n equally likely sign patterns around the true median
    allowed = (1 - confidence) / 2 * total  # P(B <= k - 1) may be at most this much
    tail, k = 0, 0
    while True:
        tail += math.comb(n, k)  # P(B <= k) * 2^n
        if tail > allowed or k + 1 > n - k:
            break
        k += 1
    return (k, n + 1 - k) if k >= 1 else None


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) of already sorted values, linear interpolation."""
    if not sorted_values:
        raise ValueError("percentile of no samples")
    position = (len(sorted_values) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    fraction = position - low
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * fraction


@dataclass(frozen=True)
class Stats:
    """Summary of samples in microseconds."""

    samples_us: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.samples_us:
            raise ValueError("Stats needs at least one sample")

    @functools.cached_property
    def sorted(self) -> list[float]:
        """The samples in order, sorted once: every order statistic reads them."""
        return sorted(self.samples_us)

    @property
    def n(self) -> int:
        return len(self.samples_us)

    @property
    def p50(self) -> float:
        return percentile(self.sorted, 50)

    def p50_ci(self, confidence: float = CONFIDENCE) -> tuple[float, float]:
        """The confidence interval of the p50 (module docstring); (nan, nan) with too few
        samples for one."""
        ranks = median_ci_ranks(self.n, confidence)
        if ranks is None:
            return math.nan, math.nan
        ordered = self.sorted
        return ordered[ranks[0] - 1], ordered[ranks[1] - 1]

    def ci_half_width(self) -> float:
        """The larger distance from the p50 to an end of its interval, as a share of the p50
        (0.02 = within +-2 %); inf without an interval or with a p50 of 0."""
        low, high = self.p50_ci()
        p50 = self.p50
        if math.isnan(low) or p50 <= 0:
            return math.inf
        return max(p50 - low, high - p50) / p50

    @property
    def mean(self) -> float:
        return math.fsum(self.samples_us) / self.n

    @property
    def min(self) -> float:
        return self.sorted[0]

    @property
    def max(self) -> float:
        return self.sorted[-1]

    @property
    def std(self) -> float:
        """Sample standard deviation (n - 1); 0 for a single sample."""
        if self.n < 2:
            return 0.0
        mean = self.mean
        return math.sqrt(math.fsum((x - mean) ** 2 for x in self.samples_us) / (self.n - 1))

    def as_columns(self, tails: bool = True) -> dict[str, float]:
        """The time_us_* columns of a results row; `tails=False` leaves p95 and p99 empty (NaN):
        samples that are means of several operations (throughput mode) have no tail."""
        ordered = self.sorted
        return {
            "time_us_p50": self.p50,
            "time_us_mean": self.mean,
            "time_us_min": self.min,
            "time_us_max": self.max,
            "time_us_p95": percentile(ordered, 95) if tails else math.nan,
            "time_us_p99": percentile(ordered, 99) if tails else math.nan,
            "time_us_std": self.std,
        }


def row_figures(stats: Stats, tails: bool, algbw: float, factor: float) -> dict[str, float]:
    """The figures of a results row (collectors.schema.ResultRow) from the samples behind it:
    samples, the time_us_* columns (as_columns, `tails` as there), algbw and busbw = algbw x
    `factor` (GB/s), the busbw factor and the p50's confidence interval."""
    ci_low, ci_high = stats.p50_ci()
    return {
        "samples": stats.n,
        **stats.as_columns(tails=tails),
        "algbw_GBps": algbw,
        "busbw_GBps": algbw * factor,
        "busbw_factor": factor,
        "ci_low_us": ci_low,
        "ci_high_us": ci_high,
    }


def algbw_gbps(size_bytes: int, time_us: float) -> float:
    """nccl-tests' algorithm bandwidth: bytes / seconds / 1e9."""
    if time_us <= 0:
        return 0.0
    return size_bytes / (time_us * 1e-6) / 1e9
