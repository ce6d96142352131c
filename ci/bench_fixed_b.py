"""The simulation behind stats/intervals.py's FIXED_B: the fixed-b critical values (Kiefer and
Vogelsang 2005) of a t statistic whose variance is a Bartlett long-run variance with bandwidth
b x T, and the cubic in b fitted to them.

    python ci/bench_fixed_b.py     # ~20 s; per confidence: z, the cubic's (c1, c2, c3), its fit
"""

from __future__ import annotations

import sys
from statistics import NormalDist

import numpy as np


def fixed_b_table(seed: int = 2026, series: int = 80_000, length: int = 250) -> str:
    """The simulation behind stats/intervals.py's FIXED_B: quantiles of |t| = |sum x| / sqrt(the
    Bartlett long-run variance of x, bandwidth b x length) over independent normal series, per
    confidence, and the cubic in b fitted to them (cv - z)."""
    rng = np.random.default_rng(seed)
    shares = np.array([0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    lags = np.arange(1, length)
    stats = []
    for _ in range(series // 10_000):
        x = rng.standard_normal((10_000, length))
        e = x - x.mean(1, keepdims=True)
        autocov = np.array([(e * e).sum(1)] + [(e[:, :-j] * e[:, j:]).sum(1) for j in lags])
        weights = [np.clip(1 - lags / (b * length), 0, None) for b in shares]
        lrv = [autocov[0] + 2 * (w[:, None] * autocov[1:]).sum(0) for w in weights]
        stats.append(np.abs(x.sum(1)) / np.sqrt(np.array(lrv)))
    t = np.concatenate(stats, 1)
    lines = []
    for confidence in (0.90, 0.95, 0.99):
        z = NormalDist().inv_cdf(0.5 + confidence / 2)
        quantiles = np.quantile(t, confidence, axis=1)
        basis = np.stack([shares, shares**2, shares**3], 1)
        coef = np.linalg.lstsq(basis, quantiles - z, rcond=None)[0]
        worst = np.abs(basis @ coef + z - quantiles).max()
        lines.append(
            f"{confidence}: z {z:.4f} coef {np.round(coef, 4).tolist()} (fit within {worst:.3f});"
            f" quantiles at b {shares.tolist()}: {np.round(quantiles, 3).tolist()}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(fixed_b_table())
    sys.exit(0)
