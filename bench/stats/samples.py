"""Statistics over timing samples. The Stats object keeps the raw samples; every figure derives
from them, so a CSV row can always be recomputed from samples.csv.

Percentiles use linear interpolation between closest ranks (numpy's default, 'linear'), so the
p50 of an even number of samples is the mean of the middle two.

p95 and p99 are tail latencies only where each sample is one operation (latency mode). A
throughput sample is the mean of `iters` back-to-back operations; over a handful of trials its
p95/p99 are nearly the maximum trial mean, not a tail of anything, so those rows leave them empty.

The confidence interval of the p50 takes the trial as the unit (intervals.py says why and how):
the interpolated order-statistic interval of a median when each trial is one sample (throughput
mode), Woodruff's clustered interval when a trial holds several (latency mode: `iters` ops each).
Samples are in trial-major order; `Stats.trials` says how many trials they split into. Where the
trials were added while looking at the interval (--precision) and a trial holds several samples,
the interval is the confidence sequence instead (sequence.py): it holds at the stop the looking
chose.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from distbench.stats.intervals import (
    CONFIDENCE,
    median_ci_ranks,
    percentile,
    trial_interval,
    trial_runs,
)
from distbench.stats.sequence import sequence_interval

__all__ = ["CONFIDENCE", "Stats", "algbw_gbps", "median_ci_ranks", "percentile", "row_figures"]


@dataclass(frozen=True)
class Stats:
    """Summary of samples in microseconds."""

    samples_us: tuple[float, ...]
    trials: int = 0
    """How many trials the samples (trial-major, equal runs) came from; 0: one trial per sample
    (throughput mode, or single-op latency trials). Only the p50's interval reads it."""
    looked: bool = False
    """Whether the trials were added until the interval looked narrow enough (--precision): with
    several samples a trial the p50's interval is then the confidence sequence (sequence.py)."""

    def __post_init__(self) -> None:
        if not self.samples_us:
            raise ValueError("Stats needs at least one sample")
        if self.trials < 0 or len(self.samples_us) % (self.trials or 1):
            raise ValueError(f"{self.n} samples do not split into {self.trials} equal trials")

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

    @property
    def clustered(self) -> bool:
        """Whether a trial holds several samples (latency mode's `iters` ops)."""
        return self.trials > 0 and self.n > self.trials

    def p50_ci(self, confidence: float = CONFIDENCE) -> tuple[float, float]:
        """The confidence interval of the p50 over trials (module docstring); (nan, nan) with
        too few trials for one."""
        if self.looked and self.clustered:
            return sequence_interval(trial_runs(self.samples_us, self.trials), confidence)
        return trial_interval(self.samples_us, self.trials or self.n, confidence)

    def ci_half_width(self, confidence: float = CONFIDENCE) -> float:
        """The larger distance from the p50 to an end of its interval at `confidence`, as a share
        of the p50 (0.02 = within +-2 %); inf without an interval or with a p50 of 0."""
        low, high = self.p50_ci(confidence)
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
    `factor` (GB/s), the busbw factor and the p50's confidence interval (over the trials that
    `stats.trials` names)."""
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
