"""Statistics over timing samples. The Stats object keeps the raw samples; every figure derives
from them, so a CSV row can always be recomputed from samples.csv.

Percentiles use linear interpolation between closest ranks (numpy's default, 'linear'), so the
p50 of an even number of samples is the mean of the middle two.

p95 and p99 are tail latencies only where each sample is one operation (latency mode). A
throughput sample is the mean of `iters` back-to-back operations; over a handful of trials its
p95/p99 are nearly the maximum trial mean, not a tail of anything, so those rows leave them empty.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


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

    @property
    def sorted(self) -> list[float]:
        return sorted(self.samples_us)

    @property
    def n(self) -> int:
        return len(self.samples_us)

    @property
    def p50(self) -> float:
        return percentile(self.sorted, 50)

    @property
    def p95(self) -> float:
        return percentile(self.sorted, 95)

    @property
    def p99(self) -> float:
        return percentile(self.sorted, 99)

    @property
    def mean(self) -> float:
        return math.fsum(self.samples_us) / self.n

    @property
    def min(self) -> float:
        return min(self.samples_us)

    @property
    def max(self) -> float:
        return max(self.samples_us)

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
        return {
            "time_us_p50": self.p50,
            "time_us_mean": self.mean,
            "time_us_min": self.min,
            "time_us_max": self.max,
            "time_us_p95": self.p95 if tails else math.nan,
            "time_us_p99": self.p99 if tails else math.nan,
            "time_us_std": self.std,
        }


def algbw_gbps(size_bytes: int, time_us: float) -> float:
    """nccl-tests' algorithm bandwidth: bytes / seconds / 1e9."""
    if time_us <= 0:
        return 0.0
    return size_bytes / (time_us * 1e-6) / 1e9
