"""Launches inside nights: the two levels of noise between runs, per hypothesis, as arrays.

One hypothesis's value in launch l of night k (the mean of its rows' y):

    y(k, l) = mu(side) + a(k) + e(k, l),   a ~ N(0, tau^2),   e ~ N(0, sigma^2)

sigma^2 is the spread of launches inside a night (placement, the load of those seconds, and the
launch's own trial noise); tau^2 is what moves a whole night (the box's state that day, drift).
A side's level is the mean of its night means, so with K nights of L_k launches

    Var(side mean) = tau^2 / K + sigma^2 * sum(1 / L_k) / K^2

and the shift D between two sides has the sum of both sides' variances. sigma^2 is estimated
from the launches' spread around their own night's mean (both sides pooled); tau^2 from the
night means' spread beyond what sigma^2 explains (one-way ANOVA), never below a stated drift
floor (what a baseline's level may move between its nights and tonight beyond its own spread:
Settings.drift). Degrees of freedom by Satterthwaite.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class SideSummary:
    """Per hypothesis (arrays of length H): one side's launches and nights."""

    launches: np.ndarray
    nights: np.ndarray
    mean: np.ndarray
    """The mean of the night means."""
    inverse_launches: np.ndarray
    """sum over nights of 1 / L_k."""
    within_squares: np.ndarray
    """Launches around their own night's mean: sum of squares, and its df sum(L_k - 1)."""
    within_df: np.ndarray
    between_squares: np.ndarray
    """Night means around the side's mean: sum of squares (df K - 1)."""
    trial_part: np.ndarray
    """The mean within-launch (trial) variance of a launch value; nan when unknown."""


def summarize(
    y: np.ndarray, within: np.ndarray, night: np.ndarray, member: np.ndarray
) -> SideSummary:
    """`y`, `within`: launches x rows; `night`: each launch's night (0 .. K-1); `member`:
    hypotheses x rows (0/1). A hypothesis uses the launches that hold all its rows."""
    k = member.sum(axis=1)
    valid = ~np.isnan(y)
    full = (valid.astype(float) @ member.T) == k  # launches x H
    means = (np.where(valid, y, 0.0) @ member.T) / k
    nights = int(night.max()) + 1 if len(night) else 0
    onehot = np.zeros((len(night), nights))
    onehot[np.arange(len(night)), night] = 1.0
    counts = onehot.T @ full  # nights x H
    sums = onehot.T @ np.where(full, means, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        night_mean = sums / counts
        present = counts > 0
        n_nights = present.sum(axis=0)
        mean = np.where(present, night_mean, 0.0).sum(axis=0) / n_nights
        inverse = np.where(present, 1.0 / counts, 0.0).sum(axis=0)
        deviation = np.where(full, means - (onehot @ np.nan_to_num(night_mean)), 0.0)
        within_squares = (deviation**2).sum(axis=0)
        within_df = np.where(present, counts - 1, 0.0).sum(axis=0)
        between = np.where(present, night_mean - mean, 0.0)
        between_squares = (between**2).sum(axis=0)
        unknown = (np.isnan(within) & valid).astype(float) @ member.T
        parts = (np.where(np.isnan(within), 0.0, within) @ member.T) / k**2
        n = full.sum(axis=0)
        trial = np.where(full, parts, 0.0).sum(axis=0) / n
        trial[(np.where(full, unknown, 0.0).sum(axis=0) > 0) | (n == 0)] = np.nan
    return SideSummary(
        n, n_nights, mean, inverse, within_squares, within_df, between_squares, trial
    )


@dataclass
class Parts:
    """One hypothesis's variance of D, by part, with degrees of freedom."""

    sigma2: float
    """The launch part (posterior, floored by the trial part)."""
    sigma_df: float
    tau2: float
    """The night part used: the estimate, or the drift floor where that is larger."""
    tau_df: float
    """K_base + K_current - 2 for an estimate; inf for the stated floor."""
    night_weight: float
    """1 / K_base + 1 / K_current."""
    launch_weight: float
    """sum(1 / L_k) / K^2 of both sides."""

    @property
    def variance(self) -> float:
        return self.tau2 * self.night_weight + self.sigma2 * self.launch_weight

    @property
    def df(self) -> float:
        """Satterthwaite's degrees of freedom of the variance of D."""
        terms = [(self.tau2 * self.night_weight, self.tau_df),
                 (self.sigma2 * self.launch_weight, self.sigma_df)]  # fmt: skip
        total = sum(t for t, _d in terms)
        spread = sum(t * t / d for t, d in terms if d > 0 and np.isfinite(d) and t > 0)
        return total * total / spread if spread > 0 else float("inf")


def parts(
    base: SideSummary, current: SideSummary, h: int, sigma2: float, sigma_df: float,
    drift2: float,
) -> Parts:  # fmt: skip
    """The variance of D for hypothesis h, given the launch part (already squeezed towards its
    prior) and the drift floor of the night part."""
    k_b, k_c = float(base.nights[h]), float(current.nights[h])
    between_df = k_b - 1 + k_c - 1
    mean_inverse = (base.inverse_launches[h] + current.inverse_launches[h]) / (k_b + k_c)
    tau2, tau_df = drift2, float("inf")
    if between_df > 0:
        ms = (base.between_squares[h] + current.between_squares[h]) / between_df
        estimate = max(0.0, float(ms) - sigma2 * float(mean_inverse))
        if estimate > drift2:
            tau2, tau_df = estimate, between_df
    launch_weight = base.inverse_launches[h] / k_b**2 + current.inverse_launches[h] / k_c**2
    return Parts(sigma2, sigma_df, tau2, tau_df, 1 / k_b + 1 / k_c, float(launch_weight))
