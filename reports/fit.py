"""The latency-bandwidth model t = alpha + size / beta, fitted to a primitive's p50 times.

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
rel_rms is above MAX_REL_RMS is `noise`: alpha and beta describe nothing. Intervals of alpha and
beta: a residual bootstrap (the fitted times times resampled log residuals, refitted the same
way, REPLICATES times, fixed seed), percentiles 2.5-97.5.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

GBPS_PER_BYTE_PER_US = 1e-3
"""1 byte/µs = 1e6 B/s = 1e-3 GB/s (GB = 1e9 bytes)."""

MAX_REL_RMS = 0.25
"""The bar a fit must pass, in the space it is fitted in: a typical relative miss (rel_rms) above
25 % means the times are noise to this model (a fit through times that swing 2x between
neighbouring sizes), and the report prints "no fit (noise)" instead of alpha and beta."""
REPLICATES = 500
"""Residual-bootstrap refits behind the parameter intervals."""
SEED = 18
"""Fixed, so the same runs give the same intervals."""

MIN_SPLIT_SIZES = 4
"""Distinct sizes needed to fit latency and bandwidth on separate sizes (two each)."""


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
    """95 % interval of alpha from a residual bootstrap (REPLICATES refits)."""
    beta_interval: tuple[float, float] = (math.nan, math.nan)
    """95 % interval of beta, the same way."""
    noise: bool = False
    """rel_rms > MAX_REL_RMS: the model does not describe these times; alpha and beta mean
    nothing (the report prints "no fit (noise)")."""

    def predict_us(self, size_bytes: float) -> float:
        return self.alpha_us + size_bytes / (self.beta_GBps / GBPS_PER_BYTE_PER_US)


def fit_lines(sizes: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(alpha, slope) of t = alpha + slope * size by relative least squares, both >= 0, for
    every row of `times` (replicates x sizes) at once."""
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
    # When the free fit breaks alpha >= 0 or slope >= 0, the best fit on that boundary.
    only_alpha, only_slope = b1 / a11, b2 / a22
    cost_alpha = np.sum((only_alpha[:, None] * inv - 1) ** 2, 1)
    cost_slope = np.sum((only_slope[:, None] * s * inv - 1) ** 2, 1)
    bad = ~(np.isfinite(alpha) & np.isfinite(slope)) | (alpha < 0) | (slope < 0)
    use_alpha = bad & (cost_alpha <= cost_slope)
    alpha = np.where(bad, np.where(use_alpha, only_alpha, 0.0), alpha)
    slope = np.where(bad, np.where(use_alpha, 0.0, only_slope), slope)
    return alpha, slope / scale


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


def fit_latency_bandwidth(sizes_bytes: Sequence[float], times_us: Sequence[float]) -> Fit:
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
    predicted = alpha + slope * sizes
    relative = np.abs(predicted - times) / times
    # Residual bootstrap: the fitted times times resampled log residuals, refitted. Two points
    # leave no residual (the line passes through both): no interval, never a zero-width one.
    alpha_low = alpha_high = slope_low = slope_high = math.nan
    if len(times) > 2:
        rng = np.random.default_rng(SEED)
        residuals = np.log(times / predicted)
        drawn = residuals[rng.integers(0, len(times), size=(REPLICATES, len(times)))]
        alphas, slopes = fit_parts(sizes, predicted * np.exp(drawn), small, large)
        tails = [2.5, 97.5]
        alpha_low, alpha_high = np.percentile(alphas, tails)
        slope_low, slope_high = np.percentile(slopes, tails)
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
        alpha_interval=(float(alpha_low), float(alpha_high)),
        beta_interval=(to_beta(float(slope_high)), to_beta(float(slope_low))),
        noise=rel_rms > MAX_REL_RMS,
    )


def to_beta(slope: float) -> float:
    """GB/s from a slope in µs per byte; math.inf when time does not grow (NaN stays NaN)."""
    if math.isnan(slope):
        return math.nan
    return GBPS_PER_BYTE_PER_US / slope if slope > 0 else math.inf


FIT_COLUMNS = [
    "alpha_us",
    "beta_GBps",
    "busbw_beta_GBps",
    "rel_rms",
    "rel_max",
    "noise",
    "alpha_low",
    "alpha_high",
    "beta_low",
    "beta_high",
    "points",
    "split",
    "alpha_from_bytes",
    "alpha_to_bytes",
    "beta_from_bytes",
    "beta_to_bytes",
]


RANGE_COLUMNS = {
    "alpha_interval": ("alpha_low", "alpha_high"),
    "beta_interval": ("beta_low", "beta_high"),
    "alpha_sizes": ("alpha_from_bytes", "alpha_to_bytes"),
    "beta_sizes": ("beta_from_bytes", "beta_to_bytes"),
}
"""Fit's (low, high) fields -> their two columns."""


def fit_columns(fit: Fit) -> dict[str, Any]:
    """FIT_COLUMNS of one fit but busbw_beta_GBps (the group's busbw factor makes it)."""
    names = ("alpha_us", "beta_GBps", "rel_rms", "rel_max", "noise", "points", "split")
    columns: dict[str, Any] = {name: getattr(fit, name) for name in names}
    for field, (low, high) in RANGE_COLUMNS.items():
        columns[low], columns[high] = getattr(fit, field)
    return columns


def fit_groups(rows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """One fit per group of communication rows (p50 time over size_bytes).

    Returns the group columns plus FIT_COLUMNS (busbw_beta_GBps: beta x the group's busbw
    factor); groups with fewer than two sizes are left out.
    """
    records = []
    for key, group in rows.groupby(by, sort=True, dropna=False, observed=True):
        group = group[group["time_us_p50"] > 0]
        if group["size_bytes"].nunique() < 2:
            continue
        fit = fit_latency_bandwidth(group["size_bytes"].tolist(), group["time_us_p50"].tolist())
        factor = float(group["busbw_factor"].iloc[0])
        values = key if isinstance(key, tuple) else (key,)
        busbw_beta = fit.beta_GBps * factor if factor > 0 else math.nan
        records.append(
            {
                **dict(zip(by, values, strict=True)),
                **fit_columns(fit),
                "busbw_beta_GBps": busbw_beta,
            }
        )
    return pd.DataFrame.from_records(records, columns=[*by, *FIT_COLUMNS])
