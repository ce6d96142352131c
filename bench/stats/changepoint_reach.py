"""What history's test of a series can see: the smallest step, at the end of a series, that its
test finds at the level it is tested at, in POWER of series like it.

    share = detectable_step(judged, after=3, floor=0.05)     # 0.18: 18 %; inf: nothing
    share = together_step(judged, after=3, floor=0.05)       # every row of its group at once
    delta = reach(pool, n=60, after=3, phi=0.45, share=0.0, pooled=True, level=0.00046, power=0.8)

Why simulate: the test runs on the normal scores of a series' ranks (changepoint_model.
normal_scores), and ranks bound what a step can show. A step whose `after` nights are the
series' largest values already has the largest scores it can get, and a larger step adds
nothing; the t of a step of a given size in log units is not that size over a standard error
once the step is a few standard deviations, nor near the end of a series. Read from the linear
formula (the step over its GLS standard error), history said `would catch >= 34 % after 3
nights` and `>= 26 % after 7` of rows of a history of 108 at phi 0.5 that found 0 % of steps that
large, and 68 % where it claimed 20 % after 15 (measured while building it: 40 histories,
each row's claimed step added to it). So the claim is simulated: series of the model the row
was judged in (AR(1) of its phi plus its launch noise), a step of delta marginal sds in their
last `after` nights, ranked, fitted and profiled as history does, and delta found by bisection
where POWER of them pass `critical` (their largest |t|, or `fixed`: the |t| at that night).
Draws are shared across the deltas (common random numbers) and seeded by the question, so a
row's claim does not change from run to run.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from scipy import special

from distbench.stats.changepoint_model import (
    DRAW_MAX,
    MIN_SIZE,
    best_split,
    calibration,
    design,
    estimate_noise,
    normal_scores,
    profile,
    raw_series,
    refined,
)
from distbench.stats.changepoint_null import NullPool
from distbench.stats.shift import POWER, share_of

if TYPE_CHECKING:
    from distbench.stats.changepoint import SeriesChanges

DRAWS = 300
"""Series simulated per question: a power of 80 % is read within about +-2.3 points."""
DELTA_MAX = 16.0
"""The largest step tried, in marginal sds; none passing there: nothing can be seen (inf)."""
BISECTIONS = 9
"""Halvings of [0, DELTA_MAX]: the step within 0.03 marginal sds."""
SIM_MAX = 120
"""Nights simulated at most (reach's docstring): what bounds a history of 1,000 nights' cost."""
PHI_STEP = 0.05
SHARE_STEP = 0.1


def reach(
    pool: NullPool, n: int, after: int, phi: float, share: float, pooled: bool, level: float,
    power: float, fixed: bool = False,
) -> float:  # fmt: skip
    """The smallest step, in marginal sds of the series, in its last `after` nights of `n` that
    its test finds at `level` in `power` of the draws: its p-value (in `pool`, read in the cell
    of each draw's own fit, as the series' is) at most `level`, at that night within PLACED; inf
    where even DELTA_MAX does not. `phi` is the fitted one (pooled: the history's), and the
    draws drift with the phi that fits to it (changepoint_model.calibration: the fit is biased
    low). The questions are few and remembered: phi rounded up to PHI_STEP and the launch-noise
    share to SHARE_STEP (more noise: a larger step, never a smaller one), the level down to two
    significant digits, and a part longer than SIM_MAX nights simulated as its last SIM_MAX (a
    step's t only grows with more nights before it, so the claim stays on the safe side)."""
    _POOLS[pool.n, pool.launches] = pool
    after = max(after, MIN_SIZE)
    nights = min(n, max(SIM_MAX, after + 4 * MIN_SIZE))
    phi = min(math.ceil(max(phi, 0.0) / PHI_STEP - 1e-9) * PHI_STEP, DRAW_MAX)
    share = min(math.ceil(max(share, 0.0) / SHARE_STEP - 1e-9) * SHARE_STEP, 0.9)
    level = float(f"{level * (1 - 1e-9):.2g}")
    return _reach(pool.n, pool.launches, nights, n, after, round(phi, 2), round(share, 2),
                  bool(pooled), level, round(power, 3), bool(fixed))  # fmt: skip


PLACED = 2
"""Nights from the step within which the largest |t| must lie for the step to count as seen."""
_POOLS: dict[tuple[int, bool], NullPool] = {}


@lru_cache(maxsize=8192)
def _reach(
    pool_n: int, launches: bool, n: int, window: int, after: int, phi: float, share: float,
    pooled: bool, level: float, power: float, fixed: bool,
) -> float:  # fmt: skip
    """reach's answer: n nights simulated, the p-values read for a part of `window` nights."""
    if n < 2 * MIN_SIZE or after > n - MIN_SIZE:
        return math.inf
    pool = _POOLS[pool_n, launches]
    rng = np.random.default_rng([n, after, round(100 * phi), round(100 * share), int(pooled)])
    true_phi = drifting_phi(phi, n, launches)
    y = raw_series(rng, np.full(DRAWS, true_phi), np.full(DRAWS, share), n)
    at = n - after - 1  # profile's column of the step's first night
    step = (np.arange(n) > at).astype(float)

    def passing(delta: float) -> float:
        scores, white, _scale = normal_scores(y + delta * step, np.full(DRAWS, share))
        noise = estimate_noise(scores, white)
        if pooled:
            noise = refined(scores, best_split(scores, noise), white, np.full(DRAWS, phi))
        t, _effect = profile(scores, noise)
        if fixed:
            p = pool.p_fixed(np.abs(t[:, at]), noise.phi, noise.white, noise.pooled)
            return float(np.mean(p <= level))
        top = np.abs(t).argmax(axis=1)
        p = pool.p_values(np.abs(t).max(axis=1), noise.phi, noise.white,
                          np.full(DRAWS, window), noise.pooled)  # fmt: skip
        return float(np.mean((p <= level) & (np.abs(top - at) <= PLACED)))

    if passing(DELTA_MAX) < power:
        return math.inf
    low, high = 0.0, DELTA_MAX
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        low, high = (low, middle) if passing(middle) >= power else (middle, high)
    return high


def drifting_phi(fitted: float, n: int, launches: bool) -> float:
    """The phi whose series of n nights fit to `fitted` at their median (the calibration read
    backwards)."""
    true, medians, _spreads = calibration(n, launches)
    return float(np.clip(np.interp(fitted, medians, true), 0.0, DRAW_MAX))


@lru_cache(maxsize=1024)
def score_sd(n: int) -> float:
    """The sd of the normal scores of n ranks (Blom): the marginal sd of a series in score
    units, which reach's deltas are in."""
    return float(np.sqrt(np.mean(special.ndtri((np.arange(1, n + 1) - 0.375) / (n + 0.25)) ** 2)))


def detectable_step(
    changes: SeriesChanges, after: int, floor: float = 0.0, power: float = POWER,
    fixed: bool = False,
) -> float:  # fmt: skip
    """The smallest step (a share: 0.18 = 18 %) with `after` nights on its new level at the end
    of the series that its last part would show with `power` (80 %) at the level it is tested
    at, and past `floor`; inf when the last part is too short to test, the noise is unknown or
    no step would (its ranks bound what a step shows: `reach` simulates it). `fixed`:
    tested at a night given in advance (a group's), which only a whole series is."""
    length = changes.nights - changes.last_start
    after = max(after, MIN_SIZE)
    noise, pool = changes.noise, changes.pool
    if pool is None or length < 2 * MIN_SIZE or after > length - MIN_SIZE:
        return math.inf
    if fixed and changes.last_start:
        return math.inf
    phi, theta, gain = (getattr(noise, f)[:, None] for f in ("phi", "theta", "gain"))
    _a, ss, sc, cc = design(phi, theta, gain, length)
    k = length - after
    info = float(ss[0, k - 1] - sc[0, k - 1] ** 2 / cc[0, 0])
    se = changes.scale * float(noise.sigma[0]) / math.sqrt(max(info, 1e-12))
    phi, white, known = float(noise.phi[0]), float(noise.white[0]), bool(noise.pooled[0])
    least = math.log1p(floor) + float(special.ndtri(power)) * se  # past the floor, with power
    if not changes.ranked:  # t grows with the step: the step over its standard error
        if fixed:
            critical = pool.critical_fixed(changes.level, phi, white, known)
        else:
            critical = pool.critical(changes.level, phi, white, length, known)
        return share_of(max(least, critical * se + float(special.ndtri(power)) * se))
    delta = reach(pool, length, after, phi, white, known, changes.level, power, fixed)
    return share_of(max(least, delta * changes.scale * score_sd(changes.nights)))


def together_step(changes: SeriesChanges, after: int, floor: float = 0.0) -> float:
    """The smallest step that a series of a group shows with POWER when every series of its
    group takes it at once (`after` nights before the end): its group's series must show it and
    the series itself at the group's night, each asked for sqrt(POWER) (both at 80 % would
    make 64 % when independent; they are not: the group holds the series). inf outside a group
    or where either cannot be seen."""
    if changes.group is None:
        return math.inf
    power = math.sqrt(POWER)
    group = detectable_step(changes.group, after, floor, power)
    return max(group, detectable_step(changes, after, floor, power, fixed=True))
