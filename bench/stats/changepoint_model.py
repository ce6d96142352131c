"""The noise model and the step statistic of history's change points (bench/stats/changepoint.py
says how they are used). A series is one case's nights, y = the mean log value of a night's
launches (larger is slower), and its noise is

    y(t) = level(t) + u(t) + v(t),   u(t) = phi u(t-1) + e(t)   (AR(1): the box's drift)
                                     v(t) white, variance `white` (launch noise: known from the
                                     spread of a night's launches; 0 with one launch a night)

With launch noise, y - phi y(t-1) is MA(1), so the whitening is ARMA(1,1): w(t) = y(t) -
phi y(t-1) + theta w(t-1).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy import special

PHI_MAX = 0.95
"""The largest phi fitted or simulated: beyond it a series is a random walk, without a level."""
DRAW_MAX = 0.99
"""The largest phi simulated (null pools, the fit's calibration). Above the largest fitted
(PHI_MAX), so that series that look like a random walk are judged against draws that may be
one: with draws up to 0.95 only, drift of phi 0.8 gave 7.5 % false alarms at 5 %, with draws up
to 0.99 about 6 %."""
WHITE_MAX = 0.9
"""The largest share of launch noise simulated."""
MIN_SIZE = 3
"""Nights on each side of a change point: one or two bad nights are noise, not a step."""
WINSOR = 3.0
"""Residuals beyond this many robust sd count as this many (a bad night)."""
REFINE = 2
"""Fits of phi around a best split: the first around the split of the plain difference of
means, the second around the GLS split under the first's model; a third changed nothing
measurable. What the first split replaced, measured while tuning (seeds 11 and 13 of
ci/bench_stats_history.py, not its default; 1,000 series a row): a first phi from the variances
of lag-1 and lag-2 differences (winsorised, as Chakar et al. 2017) and the GLS split under it.
That phi is noisy, and under one too large the GLS split follows a single large drift
innovation rather than the step; the step left in the residuals then inflates phi (by 0.031 on
average, 0.022 now: tests/unit), and the series is judged against the null of stronger drift.
The means' split: 20 % steps found at phi = 0.5 86.4 -> 88.6 % and
86.7 -> 87.5 %, false change points per 100 series at phi = 0.8 5.6 -> 5.2 and 6.3 -> 5.7."""


@dataclass(frozen=True)
class Noise:
    """Per series (arrays of N): the fitted noise model, in log units."""

    phi: np.ndarray
    theta: np.ndarray
    """The MA(1) coefficient of y - phi y(t-1) (0 without launch noise)."""
    sigma: np.ndarray
    """sd of the whitened innovation."""
    gain: np.ndarray
    """Scales the first night to the innovations' variance."""
    white: np.ndarray
    """Share of the variance that is launch noise (known, not estimated)."""
    pooled: np.ndarray
    """True where phi is its history's pooled phi (changepoint_pool), not the series' own."""

    def take(self, rows: np.ndarray) -> Noise:
        return Noise(*(getattr(self, f)[rows] for f in FIELDS))


FIELDS = ("phi", "theta", "sigma", "gain", "white", "pooled")


def normal_scores(y: np.ndarray, white: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each series (N, n) as normal scores of its ranks (Blom: ndtri((rank - 3/8) / (n + 1/4)),
    ties averaged), its launch-noise variance in score units, and the log units one score unit
    is worth (the ratio of their mean absolute night-to-night differences).

    Why ranks: a launch of this box is often an outlier (4.3 % of the recorded launches' fastest
    trials lie beyond 4 robust sd of their row, tests/data/gate-launches-interleaved.json), and
    a Gaussian null of the largest step then fires on them; the scores of a series are Gaussian
    whatever its noise, and under independent noise the statistic is distribution-free."""
    scores = special.ndtri((average_ranks(y) - 0.375) / (y.shape[1] + 0.25))
    spread = [np.abs(np.diff(v, axis=1)).mean(axis=1) for v in (y, scores)]
    scale = spread[0] / np.maximum(spread[1], 1e-12)
    safe = np.where(scale > 0, scale, 1.0)
    return scores, np.where(scale > 0, white / safe**2, 0.0), scale


def average_ranks(y: np.ndarray) -> np.ndarray:
    """Ranks 1..n along each row, ties given their mean rank (scipy.stats.rankdata's 'average',
    whose module takes seconds to import: history's start-up)."""
    count, n = y.shape
    order = np.argsort(y, axis=1, kind="stable")
    ordered = np.take_along_axis(y, order, axis=1)
    starts = np.ones((count, n), dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    ends = np.ones((count, n), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    position = np.broadcast_to(np.arange(n), (count, n))
    first = np.maximum.accumulate(np.where(starts, position, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, position, n - 1)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty((count, n))
    np.put_along_axis(ranks, order, (first + last) / 2 + 1, axis=1)
    return ranks


def robust_scale(d: np.ndarray) -> np.ndarray:
    """(N, 1): the median absolute value of each row / 0.6745, or where that is 0 (a row of
    ties: a coarse timer) its root mean square, so that ties never make the noise vanish."""
    mad = np.median(np.abs(d), axis=1, keepdims=True) / 0.6744897501960817
    rms = np.sqrt((d * d).mean(axis=1, keepdims=True))
    return np.maximum(np.where(mad > 0, mad, rms), 1e-12)


def model(phi: np.ndarray, drift: np.ndarray, white: np.ndarray, pooled: bool = False) -> Noise:
    """The whitening of AR(1) drift (phi, variance `drift`) plus white noise (`white`); `pooled`:
    phi is a history's pooled phi."""
    phi = np.clip(phi, 0.0, PHI_MAX)
    drift = np.maximum(drift, 1e-12)
    z0 = drift * (1 - phi**2) + white * (1 + phi**2)  # y - phi y(t-1): its variance, lag-1 cov
    rho = np.minimum(phi * white / z0, 0.5)
    safe = np.where(rho > 1e-9, rho, 1.0)
    theta = np.where(rho > 1e-9, (1 - np.sqrt(np.maximum(1 - 4 * safe**2, 0))) / (2 * safe), 0.0)
    sigma = np.sqrt(z0 / (1 + theta**2))
    gain = sigma / np.sqrt(drift + white)
    known = np.full(phi.shape, pooled)
    return Noise(phi, theta, sigma, gain, white / (drift + white), known)


def estimate_noise(y: np.ndarray, white: np.ndarray) -> Noise:
    """The noise model of each series (N, n), n >= 2 MIN_SIZE, robust to the steps it is used
    to look for: phi and the variance from the residuals around the best single split (refined:
    winsorised, so a bad night or the step's own night cannot make drift), first the split of
    the plain difference of means, then the GLS split under that first model (REFINE).
    `white` (N,): each series' launch-noise variance of a night value (0 when unknown)."""
    count = len(y)
    noise = model(np.zeros(count), np.ones(count), np.zeros(count))  # phi 0: plain means
    for _ in range(REFINE):
        noise = refined(y, best_split(y, noise), white)
    return noise


def best_split(y: np.ndarray, noise: Noise) -> np.ndarray:
    """(N,): each series' first night after its largest |t| under `noise` (profile), the split
    its noise is refined around: the data's (estimate_noise, changepoint_pool) and the null
    draws' (changepoint_null) alike."""
    t, _ = profile(y, noise)
    return np.abs(t).argmax(axis=1) + 1


def refined(
    y: np.ndarray, split: np.ndarray, white: np.ndarray, phi: np.ndarray | None = None
) -> Noise:
    """The model from the residuals around two means, split before night `split` (N,):
    variance and lag-1 autocovariance (winsorised), phi's least-squares bias added back; or, with
    `phi` given (N,), that phi (a history's pooled phi: changepoint_pool) and the residuals'
    variance."""
    n = y.shape[1]
    after = np.arange(n)[None, :] >= split[:, None]
    means = [np.where(side, y, 0).sum(1) / side.sum(1) for side in (~after, after)]
    resid = y - np.where(after, means[1][:, None], means[0][:, None])
    scale = robust_scale(resid)
    resid = np.clip(resid, -WINSOR * scale, WINSOR * scale)
    c0, c1 = (resid * resid).mean(1), (resid[:, 1:] * resid[:, :-1]).sum(1) / n
    drift = np.maximum(c0 - white, 1e-3 * c0 + 1e-12)
    if phi is not None:
        return model(phi, drift, np.minimum(white, c0), pooled=True)
    phi = c1 / drift
    phi = phi + (1 + 3 * phi) / n + 2 / n  # Kendall's (1 + 3 phi) / n, and two means removed
    return model(phi, drift, np.minimum(white, c0))


def geometric(theta: np.ndarray, length: np.ndarray | int) -> np.ndarray:
    """sum_{j < length} theta^j for length >= 1 (1 when theta is 0: only j = 0)."""
    safe = np.where(theta > 0, theta, 0.5)
    return np.where(theta > 0, (1 - safe**length) / (1 - safe), 1.0)


def design(
    phi: np.ndarray, theta: np.ndarray, gain: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The whitened design of a window of n nights, for steps at k = 1 .. n-1 (columns; phi,
    theta, gain are columns (N, 1)): A, sum h^2, sum h c (c: the whitened intercept) and sum
    c^2. A step's information is sum h^2 - (sum h c)^2 / sum c^2."""
    a = (1 - phi) / (1 - theta)
    length = n - np.arange(1, n)[None, :]
    if not theta.any():  # AR(1) alone: h = 1, A, A, ...; c = gain, A, A, ...
        ss = length * a**2 + (1 - a**2)
        sc = length * a**2 + a * (1 - a)
        cc = n * a**2 + (gain**2 - a**2)
        return a, ss, sc, cc
    log_theta = np.log(np.maximum(theta, 1e-300))
    g1 = (1 - np.exp(length * log_theta)) / (1 - theta)
    g2 = (1 - np.exp(2 * length * log_theta)) / (1 - theta**2)
    ss = length * a**2 + 2 * a * (1 - a) * g1 + (1 - a) ** 2 * g2
    decay = np.exp((n - length) * log_theta)  # theta^k
    sc = length * a**2 + a * (1 - a) * g1 + (gain - a) * decay * (a * g1 + (1 - a) * g2)
    cc = n * a**2 + 2 * a * (gain - a) * geometric(theta, n)
    cc = cc + (gain - a) ** 2 * geometric(theta**2, n)
    return a, ss, sc, cc


def profile(y: np.ndarray, noise: Noise, trim: int = MIN_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """(t, effect), each (N, n - 1): for a step whose first night is k = 1 .. n-1, its GLS t and
    its size in log units (0 where k leaves fewer than `trim` nights on a side). The whitening
    w = y - phi y(t-1) + theta w(t-1) turns a step at k into h_j = A + (1 - A) theta^j nights
    later (A = (1 - phi) / (1 - theta)): every sum below is a cumulative or geometric one."""
    n = y.shape[1]
    phi, theta, sigma, gain = (
        getattr(noise, f)[:, None] for f in ("phi", "theta", "sigma", "gain")
    )
    w = np.empty_like(y)
    w[:, :1] = gain * y[:, :1]
    z = y[:, 1:] - phi * y[:, :-1]
    decayed = w  # G_k = sum_{t >= k} theta^(t-k) w_t: w itself when theta is 0
    if not theta.any():
        w[:, 1:] = z
    else:
        for t in range(1, n):  # a loop over nights, every series at once
            w[:, t] = z[:, t - 1] + theta[:, 0] * w[:, t - 1]
        decayed = np.empty_like(w)
        decayed[:, -1] = w[:, -1]
        for t in range(n - 2, -1, -1):
            decayed[:, t] = w[:, t] + theta[:, 0] * decayed[:, t + 1]
    sums = np.cumsum(w[:, ::-1], axis=1)[:, ::-1]  # R_k = sum_{t >= k} w_t
    a, ss, sc, cc = design(phi, theta, gain, n)
    k = np.arange(1, n)[None, :]
    sw = a * sums[:, 1:] + (1 - a) * decayed[:, 1:]
    cw = a * sums[:, :1] + (gain - a) * decayed[:, :1]
    numerator = sw - sc * cw / cc
    info = np.maximum(ss - sc * sc / cc, 1e-12)
    t_stat = numerator / (sigma * np.sqrt(info))
    effect = numerator / info
    inside = (k >= trim) & (k <= n - trim)
    return np.where(inside, t_stat, 0.0), np.where(inside, effect, 0.0)


def simulated(
    rng: np.random.Generator, phi: np.ndarray, share: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Series of n nights with no change, one per phi (raw_series), as normal scores with their
    launch-noise variance in score units (normal_scores)."""
    scores, white, _scale = normal_scores(raw_series(rng, phi, share, n), share)
    return scores, white


def raw_series(rng: np.random.Generator, phi: np.ndarray, share: np.ndarray, n: int) -> np.ndarray:
    """Series of n nights with no change, one per phi: AR(1) drift of marginal variance
    1 - share, started stationary, plus white launch noise of variance share."""
    count = len(phi)
    e = rng.standard_normal((count, n)) * np.sqrt(1 - phi**2)[:, None]
    drift = np.empty((count, n))
    drift[:, 0] = rng.standard_normal(count)
    for t in range(1, n):
        drift[:, t] = phi * drift[:, t - 1] + e[:, t]
    y = np.sqrt(1 - share)[:, None] * drift
    if share.any():
        y += np.sqrt(share)[:, None] * rng.standard_normal((count, n))
    return y


CALIBRATION_WORK = 2_000_000
"""Draws x nights of the fit's calibration: 8,000 draws (400 a bin) up to 250 nights, fewer
beyond (at least 2,000), where the fitted phi is sharper."""
CALIBRATION_BIN = 0.05


@cache
def calibration(n: int, launches: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(phi, the median fitted phi, the sd of fitted phi) over bins of CALIBRATION_BIN of phi,
    for series of n nights (with launch noise of a share drawn over [0, WHITE_MAX] if
    `launches`): estimate_noise's phi is biased low (by 0.05 at phi 0.5 and 60 nights, by 0.1
    at 0.9), and this says by how much. The medians are made increasing, so that the map reads
    backwards too."""
    rng = np.random.default_rng([11, n, int(launches)])
    count = min(8_000, max(2_000, CALIBRATION_WORK // n))
    phi = rng.uniform(0.0, DRAW_MAX, count)
    share = rng.uniform(0.0, WHITE_MAX, count) if launches else np.zeros(count)
    fitted = estimate_noise(*simulated(rng, phi, share, n)).phi
    which = np.minimum((phi / CALIBRATION_BIN).astype(int), round(DRAW_MAX / CALIBRATION_BIN) - 1)
    bins = np.unique(which)
    true = np.array([phi[which == b].mean() for b in bins])
    medians = np.array([np.median(fitted[which == b]) for b in bins])
    spreads = np.array([fitted[which == b].std() for b in bins])
    medians = np.maximum.accumulate(medians) + 1e-9 * np.arange(len(bins))
    return true, medians, spreads


SPREAD_WORK = 1_000_000
"""Draws x nights simulated for estimation's own spread of phi: 2,000 series up to 500 nights
(its variance known within about 3 %), fewer beyond, at least 500 (6 %): a history's warm run
pays it once, 0.3 s of CPU at 1,000 nights."""


@cache
def estimator_variance(phi: float, share: float, n: int) -> float:
    """The variance of the fitted phi of series of n nights whose drift has this phi and whose
    launch noise is this share of a night's variance: series simulated and fitted as history
    fits them (SPREAD_WORK), a fixed seed."""
    rng = np.random.default_rng([n, round(100 * phi), round(10 * share)])
    count = min(2_000, max(500, SPREAD_WORK // n))
    scores, white = simulated(rng, np.full(count, phi), np.full(count, share), n)
    return float(np.var(estimate_noise(scores, white).phi, ddof=1))
