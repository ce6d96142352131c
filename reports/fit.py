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
the largest size dominates it, so it reads 0.99 while small sizes are missed by 100 %.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

GBPS_PER_BYTE_PER_US = 1e-3
"""1 byte/µs = 1e6 B/s = 1e-3 GB/s (GB = 1e9 bytes)."""

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

    def predict_us(self, size_bytes: float) -> float:
        return self.alpha_us + size_bytes / (self.beta_GBps / GBPS_PER_BYTE_PER_US)


def _cost(alpha: float, slope: float, sizes: np.ndarray, times: np.ndarray) -> float:
    return float(np.sum(((alpha + slope * sizes - times) / times) ** 2))


def fit_line(sizes: np.ndarray, times: np.ndarray) -> tuple[float, float]:
    """(alpha, slope) of t = alpha + slope * size by relative least squares, both >= 0."""
    # Dividing each equation alpha + slope*s = t by t makes plain least squares minimise relative
    # error: rows [1/t, s/t], right-hand side 1.
    design = np.column_stack([1.0 / times, sizes / times])
    (alpha, slope), *_ = np.linalg.lstsq(design, np.ones_like(times), rcond=None)
    alpha, slope = float(alpha), float(slope)
    if alpha < 0 or slope < 0:
        only_alpha = (float(np.sum(1 / times) / np.sum(1 / times**2)), 0.0)
        only_slope = (0.0, float(np.sum(sizes / times) / np.sum((sizes / times) ** 2)))
        alpha, slope = min(only_alpha, only_slope, key=lambda c: _cost(c[0], c[1], sizes, times))
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
    alpha, _ = fit_line(sizes[small], times[small])
    _, slope = fit_line(sizes[large], times[large])
    relative = np.abs(alpha + slope * sizes - times) / times
    return Fit(
        alpha_us=alpha,
        beta_GBps=GBPS_PER_BYTE_PER_US / slope if slope > 0 else math.inf,
        rel_rms=math.sqrt(float(np.mean(relative**2))),
        rel_max=float(relative.max()),
        points=len(times),
        split=split,
        alpha_sizes=(float(sizes[small].min()), float(sizes[small].max())),
        beta_sizes=(float(sizes[large].min()), float(sizes[large].max())),
    )


FIT_COLUMNS = [
    "alpha_us",
    "beta_GBps",
    "busbw_beta_GBps",
    "rel_rms",
    "rel_max",
    "points",
    "split",
    "alpha_from_bytes",
    "alpha_to_bytes",
    "beta_from_bytes",
    "beta_to_bytes",
]


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
        records.append(
            {
                **dict(zip(by, values, strict=True)),
                "alpha_us": fit.alpha_us,
                "beta_GBps": fit.beta_GBps,
                "busbw_beta_GBps": fit.beta_GBps * factor if factor > 0 else math.nan,
                "rel_rms": fit.rel_rms,
                "rel_max": fit.rel_max,
                "points": fit.points,
                "split": fit.split,
                "alpha_from_bytes": fit.alpha_sizes[0],
                "alpha_to_bytes": fit.alpha_sizes[1],
                "beta_from_bytes": fit.beta_sizes[0],
                "beta_to_bytes": fit.beta_sizes[1],
            }
        )
    return pd.DataFrame.from_records(records, columns=[*by, *FIT_COLUMNS])
