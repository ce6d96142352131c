"""The latency-bandwidth model t = alpha + size / beta, fitted to one line's p50 times, with
intervals that hold their 95 %.

alpha (µs) is the latency, beta (GB/s) the bandwidth that large messages reach: two numbers that
summarise a cluster. As in Hockney's model and LogP practice, each comes from the sizes where it
dominates: alpha is the intercept of a fit on the smallest third of the sizes, beta the slope of a
fit on the largest third (at least two sizes each). One fit over every size lets the mid sizes,
where NCCL switches protocols and effective bandwidth is far below beta, drag alpha up to several
times the latency a small message really has. With fewer than four sizes there is nothing to
split: one fit over all of them, and alpha is only that line's intercept (`split` False).

Each fit is least squares on relative error (weights 1/t^2): minimise sum(((a + s/b - t) / t)^2),
so every size has the same say. alpha >= 0 and beta > 0 are enforced: when the free fit breaks
one, the best fit on that boundary is taken (alpha = 0, or beta = infinity: time flat in size).

Quality is stated in the space the fit works in, relative error, for the model (alpha, beta) at
every size: rel_rms (typical miss) and rel_max (worst miss). R^2 on absolute times is not given:
the largest size dominates it, so it reads 0.99 while small sizes are missed by 100 %. A fit whose
rel_rms is above MAX_REL_RMS is `noise`: alpha and beta describe nothing.

Intervals (95 %): weighted least squares' own, with the degrees of freedom each fit leaves. The
relative misses of the p50s behind alpha are taken as independent with one variance s^2,
estimated from that fit's own residuals on df = (its sizes - 2) degrees of freedom; then
alpha -+ t(df) se(alpha), se^2 = s^2 [(X'WX)^-1]_11 (X = [1, size], W = 1/t^2). The slope comes
the same way from the large sizes' fit, with its own variance: a p50 scatters several times more,
in relative terms, at 1K than at 64M on a loaded box (log sd 0.5-1.0 against 0.14-0.2 between
launches here), and one variance pooled over both ends gave alpha's interval 89 % and beta's 98 %.
The mid sizes, which the model is not meant to follow, are left out. Each end is cut to the values
the model allows (alpha >= 0, slope >= 0: beta's upper end is infinite when the slope's lower end
reaches 0). The t quantile is what 0.2.0's residual bootstrap lacked: with 1 to 3 residuals it
covered 48-70 % (docs/measurement.md, "In reports"). With one degree of freedom t is 12.7, so the
intervals of 9 to 11 sizes are wide: they say how little three sizes pin a number down.

No interval below 9 sizes: 4 to 8 sizes split two and two leave an end's fit no degree of
freedom, and one fit over 2 or 3 sizes mixes the scatter of its smallest and largest size into
one variance (3 sizes 1K, 64K, 1M on this box: alpha's interval covered 90.5 %). From 9 sizes on
(three behind each end) there is one. ci/bench_stats_intervals.py measures the coverage, over
the fits a report shows (not "no fit (noise)"): 95.3 % (alpha) and 94.9 % (beta) at a quiet box's
scatter; at this box's, where 5 fits in 6 are noise, 92.2 % and 94.9 % (93.8 % for alpha over
every fit: the bar on rel_rms keeps fits whose residuals, and so s^2, came out small).

What the interval holds: this run's alpha and beta, the scatter of its p50s from size to size. A
shift that moves every size of a launch alike (a busier box) moves alpha and beta together and is
not in it; runs are compared for that (compare, report).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from distbench.stats.intervals import CONFIDENCE, t_quantile

GBPS_PER_BYTE_PER_US = 1e-3
"""1 byte/µs = 1e6 B/s = 1e-3 GB/s (GB = 1e9 bytes)."""

MAX_REL_RMS = 0.25
"""The bar a fit must pass, in the space it is fitted in: a typical relative miss (rel_rms) above
25 % means the times are noise to this model (a fit through times that swing 2x between
neighbouring sizes), and the report prints "no fit (noise)" instead of alpha and beta."""
MIN_SPLIT_SIZES = 4
"""Distinct sizes needed to fit latency and bandwidth on separate sizes (two each)."""
MIN_DF = 1
"""Residual degrees of freedom each fit needs for an interval (a variance needs a residual)."""
INTERVAL_SIZES = 3 * (2 + MIN_DF)
"""The fewest sizes that give alpha and beta an interval: each end's fit takes a third of the
sizes and needs 2 + MIN_DF of them (9)."""


@dataclass(frozen=True)
class Fit:
    """t = alpha_us + size_bytes / (beta_GBps * 1e3), over `points` sizes."""

    alpha_us: float
    """Latency: the intercept of the fit on the small sizes (of every size when not split)."""
    beta_GBps: float
    """Bandwidth: 1 / slope of the fit on the large sizes; math.inf when time does not grow."""
    rel_rms: float
    """sqrt(mean(((predicted - t) / t)^2)) over every size: the typical relative miss."""
    rel_max: float
    """max(|predicted - t| / t) over every size: the worst relative miss."""
    points: int
    split: bool
    """True: alpha and beta come from separate sizes; False: one fit (alpha is an intercept)."""
    alpha_sizes: tuple[float, float]
    """Smallest and largest size behind alpha."""
    beta_sizes: tuple[float, float]
    """Smallest and largest size behind beta."""
    alpha_interval: tuple[float, float] = (math.nan, math.nan)
    """95 % interval of alpha (module docstring); NaN below 9 sizes."""
    beta_interval: tuple[float, float] = (math.nan, math.nan)
    """95 % interval of beta, the same way (its upper end inf when the slope may be 0)."""
    df: int = 0
    """Residual degrees of freedom behind the intervals (the smaller end's when split)."""
    noise: bool = False
    """rel_rms > MAX_REL_RMS: the model does not describe these times; alpha and beta mean
    nothing (the report prints "no fit (noise)")."""

    def predict_us(self, size_bytes: float) -> float:
        return self.alpha_us + size_bytes / (self.beta_GBps / GBPS_PER_BYTE_PER_US)


def fit_lines(sizes: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(alpha, slope) of t = alpha + slope * size by relative least squares, both >= 0, for
    every row of `times` (replicates x sizes) at once."""
    alpha, slope, _ = free_fit(sizes, times)
    # When the free fit breaks alpha >= 0 or slope >= 0, the best fit on that boundary.
    scale = float(sizes.max()) or 1.0
    s, inv = sizes / scale, 1.0 / times
    a11, a22 = np.sum(inv**2, 1), np.sum((s * inv) ** 2, 1)
    only_alpha, only_slope = np.sum(inv, 1) / a11, np.sum(s * inv, 1) / a22
    cost_alpha = np.sum((only_alpha[:, None] * inv - 1) ** 2, 1)
    cost_slope = np.sum((only_slope[:, None] * s * inv - 1) ** 2, 1)
    bad = ~(np.isfinite(alpha) & np.isfinite(slope)) | (alpha < 0) | (slope < 0)
    use_alpha = bad & (cost_alpha <= cost_slope)
    alpha = np.where(bad, np.where(use_alpha, only_alpha, 0.0), alpha)
    slope = np.where(bad, np.where(use_alpha, 0.0, only_slope / scale), slope)
    return alpha, slope


def free_fit(sizes: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The unconstrained relative least-squares (alpha, slope) per row of `times`, and the
    diagonal of (X'WX)^-1 (alpha's, slope's: their variances per unit of s^2)."""
    # Dividing each equation alpha + slope*s = t by t makes plain least squares minimise relative
    # error: rows [1/t, s/t], right-hand side 1. Sizes are scaled to <= 1 for the 2x2 normal
    # equations' conditioning.
    scale = float(sizes.max()) or 1.0
    s, inv = sizes / scale, 1.0 / times
    a11, a12, a22 = np.sum(inv**2, 1), np.sum(s * inv**2, 1), np.sum((s * inv) ** 2, 1)
    b1, b2 = np.sum(inv, 1), np.sum(s * inv, 1)
    det = a11 * a22 - a12**2
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha, slope = (a22 * b1 - a12 * b2) / det, (a11 * b2 - a12 * b1) / det
        inverse = np.stack([a22 / det, a11 / det / scale**2], axis=-1)
    return alpha, slope / scale, inverse


def fit_line(sizes: np.ndarray, times: np.ndarray) -> tuple[float, float]:
    """(alpha, slope) of t = alpha + slope * size by relative least squares, both >= 0."""
    alpha, slope = fit_lines(np.asarray(sizes, dtype=float), np.asarray(times, dtype=float)[None])
    return float(alpha[0]), float(slope[0])


def fit_parts(
    sizes: np.ndarray, times: np.ndarray, small: np.ndarray, large: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """alpha from the `small` sizes, slope from the `large` ones, per row of `times`."""
    alpha, _ = fit_lines(sizes[small], times[:, small])
    _, slope = fit_lines(sizes[large], times[:, large])
    return alpha, slope


def fit_latency_bandwidth(
    sizes_bytes: Sequence[float], times_us: Sequence[float], confidence: float = CONFIDENCE
) -> Fit:
    """alpha from the small sizes, beta from the large ones; needs two distinct sizes, times > 0."""
    sizes = np.asarray(sizes_bytes, dtype=float)
    times = np.asarray(times_us, dtype=float)
    if sizes.shape != times.shape or sizes.ndim != 1:
        raise ValueError("sizes and times must be sequences of the same length")
    if not (np.all(np.isfinite(times)) and np.all(times > 0) and np.all(sizes >= 0)):
        raise ValueError("times must be positive and finite, sizes non-negative")
    distinct = np.unique(sizes)
    if len(distinct) < 2:
        raise ValueError("the model needs at least two distinct sizes")
    split = len(distinct) >= MIN_SPLIT_SIZES
    share = max(2, len(distinct) // 3)
    small = sizes <= distinct[share - 1] if split else np.ones_like(sizes, dtype=bool)
    large = sizes >= distinct[-share] if split else small
    alpha_all, slope_all = fit_parts(sizes, times[None], small, large)
    alpha, slope = float(alpha_all[0]), float(slope_all[0])
    relative = np.abs(alpha + slope * sizes - times) / times
    alpha_interval, slope_interval, df = intervals(sizes, times, small, large, split, confidence)
    rel_rms = math.sqrt(float(np.mean(relative**2)))
    return Fit(
        alpha_us=alpha,
        beta_GBps=to_beta(slope),
        rel_rms=rel_rms,
        rel_max=float(relative.max()),
        points=len(times),
        split=split,
        alpha_sizes=(float(sizes[small].min()), float(sizes[small].max())),
        beta_sizes=(float(sizes[large].min()), float(sizes[large].max())),
        alpha_interval=alpha_interval,
        beta_interval=(to_beta(slope_interval[1]), to_beta(slope_interval[0])),
        df=df,
        noise=rel_rms > MAX_REL_RMS,
    )


def intervals(
    sizes: np.ndarray,
    times: np.ndarray,
    small: np.ndarray,
    large: np.ndarray,
    split: bool,
    confidence: float,
) -> tuple[tuple[float, float], tuple[float, float], int]:
    """(alpha's interval, the slope's interval, df): each from its own fit's residuals and t
    quantile (module docstring); NaN for one fit over every size, and when an end's fit has
    fewer than MIN_DF degrees of freedom. df is the smaller of the two ends'."""
    parts = [small, large] if split else [small]
    dfs = [int(part.sum()) - 2 for part in parts]
    nan = (math.nan, math.nan)
    if not split or min(dfs) < MIN_DF:
        return nan, nan, max(min(dfs), 0)
    ends = []
    for part, df in zip(parts, dfs, strict=True):
        alpha, slope, inverse = free_fit(sizes[part], times[None, part])
        relative = (alpha[0] + slope[0] * sizes[part] - times[part]) / times[part]
        variance = float(np.sum(relative**2)) / df
        reach = t_quantile(0.5 + confidence / 2, df)
        ends.append((alpha[0], slope[0], inverse[0], variance, reach))
    alpha, _, inverse, variance, reach = ends[0]
    half = reach * math.sqrt(variance * float(inverse[0]))
    alpha_interval = (max(0.0, float(alpha - half)), max(0.0, float(alpha + half)))
    _, slope, inverse, variance, reach = ends[-1]
    half = reach * math.sqrt(variance * float(inverse[1]))
    slope_interval = (max(0.0, float(slope - half)), max(0.0, float(slope + half)))
    return alpha_interval, slope_interval, min(dfs)


def to_beta(slope: float) -> float:
    """GB/s from a slope in µs per byte; math.inf when time does not grow (NaN stays NaN)."""
    if math.isnan(slope):
        return math.nan
    return GBPS_PER_BYTE_PER_US / slope if slope > 0 else math.inf
