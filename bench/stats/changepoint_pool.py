"""One drift for the series of one history, when they agree on it: their phi pooled, so that
history's change-point test does not pay, series by series, for a phi that 60 nights estimate
poorly.

    noise = pooled_noise(scores, white, noise)   # rows: one history's series of one length

Why: the series of one history were measured on one box, night after night. One series of 60
nights estimates its phi with an sd of about 0.13 (ci/bench_stats_history.py), and its test must
allow for drift as strong as that phi may be: with phi known, a 20 % step at phi = 0.5 is found
in 97.6 % of series rather than 90.5 % (docs/history.md).

When: the series' fitted phi must spread no more than estimation alone makes them spread, and
they must be many independent series, not one drift seen many times.

- Estimation's own spread s^2 is simulated at their median (the estimator run on up to
  2,000 AR(1) series of the same length and launch-noise share); the spread of their true phi is
  what their fitted phi spread beyond it, tau^2 = v - s^2 (a method-of-moments random
  effect, robust to the few series whose step moved their phi: qn_variance). Pooled
  when tau^2 <= s^2 * AGREE: series whose phi differ by more keep their own.
- Their residuals' mean correlation rho gives the series' effective number, m / (1 + (m - 1)
  rho) (Kish's design effect); pooled when that is POOL_MIN or more. Series that share one
  realised drift agree on phi whatever it is, and pooling them says nothing more than one.

The pooled phi is the median; the series are then judged in the null cells of a pooled phi
(changepoint_null.pooled_phi: each draw judged at the median fitted phi of its true phi, plus
the error of a median of POOL_MIN series and the spread of true phi that AGREE lets through).
That null is conservative for a history of many series that share one phi (a null history of
108 shows any false change point about 1 % of the time, not 5 %) and holds its level for
series whose phi differ as much as the rule allows; docs/history.md has the figures.
"""

from __future__ import annotations

import numpy as np

from distbench.stats.changepoint_model import (
    WHITE_MAX,
    Noise,
    best_split,
    estimator_variance,
    refined,
)

POOL_MIN = 8
"""Independent series a history needs before their phi is pooled."""
AGREE = 1 / 3
"""The largest spread of the series' true phi, as a share of estimation's own (tau^2 / s^2),
that still pools: a random effect of sd 0.075 at 60 nights and phi = 0.5."""


def pooled_noise(scores: np.ndarray, white: np.ndarray, noise: Noise) -> Noise:
    """The rows' noise (one history's series of one length: their normal `scores`, launch-noise
    variance `white` in score units and own fitted `noise`) at their median phi, marked pooled,
    when they agree on it (module docstring); else `noise` itself."""
    count, n = scores.shape
    if count < POOL_MIN:
        return noise
    split = best_split(scores, noise)
    centre = float(np.median(noise.phi))
    share = round(min(float(np.median(noise.white)), WHITE_MAX), 1)
    spread = estimator_variance(round(centre, 2), share, n)
    if qn_variance(noise.phi) - spread > AGREE * spread:
        return noise
    if effective_count(scores, split) < POOL_MIN:
        return noise
    return refined(scores, split, white, np.full(count, centre))


def qn_variance(phi: np.ndarray) -> float:
    """The square of Rousseeuw and Croux's (1993) Qn scale of the fitted phi: the first quartile
    of their pairwise distances, times 2.2219 and its small-sample factor, a normal variance.
    Why Qn and not the MAD it replaced: both ignore up to half of the series (the few whose step
    moved their phi, and on this box's recorded sessions the rows that drift their own way),
    but the MAD is less than half as efficient (37 % against 82 % at the normal): from 108
    series its estimate of the spread varies by 21 % (sd of MAD^2 / s^2), so 7 % of histories
    whose series share one phi were read as disagreeing and judged each at its own phi (their
    steps mostly missed); Qn's varies by 15 %, 1.3 % of them (400 draws of 108 normal phi;
    tests/unit). A winsorised variance was as efficient but not as robust: on the recorded
    sessions (2 launches a night) it refused to pool where the MAD and Qn pool, and 3 of 7
    primitives 25 % slower were found in 5 % of their rows instead of 51 % (measured while
    building it). Qn by hand: scipy has none, and
    statsmodels' is not worth its install for one quantile."""
    x = np.asarray(phi, float)
    n = len(x)
    if n < 2:
        return 0.0
    distances = np.abs(x[:, None] - x[None, :])[np.triu_indices(n, 1)]
    h = n // 2 + 1
    k = h * (h - 1) // 2
    qn = 2.2219 * float(np.partition(distances, k - 1)[k - 1])
    qn *= n / (n + 1.4) if n % 2 else n / (n + 3.8)
    return qn * qn


def effective_count(scores: np.ndarray, split: np.ndarray) -> float:
    """m / (1 + (m - 1) rho), rho the mean correlation of the series' residuals around their
    two means (split before night `split`)."""
    count, n = scores.shape
    after = np.arange(n)[None, :] >= split[:, None]
    means = [
        np.where(side, scores, 0).sum(1) / np.maximum(side.sum(1), 1) for side in (~after, after)
    ]
    resid = scores - np.where(after, means[1][:, None], means[0][:, None])
    z = resid / np.maximum(resid.std(axis=1, keepdims=True), 1e-12)
    rho = (float((z.sum(0) ** 2).sum()) - float((z * z).sum())) / (count * (count - 1) * n)
    return count / (1 + (count - 1) * max(rho, 0.0))
