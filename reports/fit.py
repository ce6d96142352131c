"""The latency-bandwidth model t = alpha + size / beta, fitted to a primitive's p50 times.

alpha (µs) is the cost of an empty message, beta (GB/s) the bandwidth that large messages reach:
two numbers that summarise a cluster. The fit is least squares on relative error, i.e. weights
1/t^2: minimise sum(((alpha + size/beta - t) / t)^2). Unweighted least squares would let the largest
size (thousands of times the smallest time) decide alone and leave alpha meaningless; relative
error gives every size the same say. alpha >= 0 and beta > 0 are enforced: when the free fit breaks
one, the best fit on that boundary is taken (alpha = 0, or beta = infinity: time flat in size).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

GBPS_PER_BYTE_PER_US = 1e-3
"""1 byte/µs = 1e6 B/s = 1e-3 GB/s (GB = 1e9 bytes)."""


@dataclass(frozen=True)
class Fit:
    """t = alpha_us + size_bytes / (beta_GBps * 1e3), over `points` sizes."""

    alpha_us: float
    beta_GBps: float
    """math.inf when the times do not grow with size."""
    r2: float
    """1 - SS_res / SS_tot on the times themselves; NaN when every time is equal."""
    rel_rms: float
    """sqrt(mean(((predicted - t) / t)^2)): the typical relative miss, 0.05 = 5 %."""
    points: int

    def predict_us(self, size_bytes: float) -> float:
        return self.alpha_us + size_bytes / (self.beta_GBps / GBPS_PER_BYTE_PER_US)


def _cost(alpha: float, slope: float, sizes: np.ndarray, times: np.ndarray) -> float:
    return float(np.sum(((alpha + slope * sizes - times) / times) ** 2))


def fit_latency_bandwidth(sizes_bytes: Sequence[float], times_us: Sequence[float]) -> Fit:
    """Fit t = alpha + size/beta by relative least squares; needs two distinct sizes, times > 0."""
    sizes = np.asarray(sizes_bytes, dtype=float)
    times = np.asarray(times_us, dtype=float)
    if sizes.shape != times.shape or sizes.ndim != 1:
        raise ValueError("sizes and times must be sequences of the same length")
    if not (np.all(np.isfinite(times)) and np.all(times > 0) and np.all(sizes >= 0)):
        raise ValueError("times must be positive and finite, sizes non-negative")
    if len(np.unique(sizes)) < 2:
        raise ValueError("the model needs at least two distinct sizes")
    # Dividing each equation alpha + slope*s = t by t makes plain least squares minimise relative
    # error: rows [1/t, s/t], right-hand side 1.
    design = np.column_stack([1.0 / times, sizes / times])
    (alpha, slope), *_ = np.linalg.lstsq(design, np.ones_like(times), rcond=None)
    alpha, slope = float(alpha), float(slope)
    if alpha < 0 or slope < 0:
        only_alpha = (float(np.sum(1 / times) / np.sum(1 / times**2)), 0.0)
        only_slope = (0.0, float(np.sum(sizes / times) / np.sum((sizes / times) ** 2)))
        alpha, slope = min(only_alpha, only_slope, key=lambda c: _cost(c[0], c[1], sizes, times))
    predicted = alpha + slope * sizes
    total = float(np.sum((times - times.mean()) ** 2))
    residual = float(np.sum((times - predicted) ** 2))
    return Fit(
        alpha_us=alpha,
        beta_GBps=GBPS_PER_BYTE_PER_US / slope if slope > 0 else math.inf,
        r2=1.0 - residual / total if total > 0 else math.nan,
        rel_rms=math.sqrt(float(np.mean(((predicted - times) / times) ** 2))),
        points=len(times),
    )


def fit_groups(rows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """One fit per group of communication rows (p50 time over size_bytes).

    Returns the group columns plus alpha_us, beta_GBps, busbw_beta_GBps (beta x the group's busbw
    factor), r2, rel_rms, points; groups with fewer than two sizes are left out.
    """
    records = []
    for key, group in rows.groupby(by, sort=True, dropna=False):
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
                "busbw_beta_GBps": fit.beta_GBps * factor,
                "r2": fit.r2,
                "rel_rms": fit.rel_rms,
                "points": fit.points,
            }
        )
    columns = [*by, "alpha_us", "beta_GBps", "busbw_beta_GBps", "r2", "rel_rms", "points"]
    return pd.DataFrame.from_records(records, columns=columns)
