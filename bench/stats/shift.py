"""Two sides' launches of one row (or band): how far apart they are, how sure that is, and the
smallest change this comparison could have seen.

In log terms (y = log time; a bandwidth's log negated), a side's level is the mean of its nights'
means, and the shift is D = level(current) - level(baseline). Its variance has a night part and
a launch part (nested.py), the launch part squeezed towards the prior of similar rows
(components.Prior) and never below the launches' own trial noise, the night part never below
the stated drift floor; so D / se(D) has a t distribution with Satterthwaite's degrees of
freedom when nothing changed: the p-value, the interval exp(D -+ t se) of the time ratio, and
the power calculation all follow from it.

detectable_change answers "what would this comparison have caught?": the smallest slowdown x
with P(reject | true shift log(1+x)) >= power at the level the row is really tested at (after
the multiplicity rule), and at least the threshold floor. With a floor f the rule needs D past
both log(1 + f) and t_crit se, so the power is reached at max(log(1 + f), t_crit se) +
t_power se.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from distbench.stats.components import LaunchValue, Prior
from distbench.stats.nested import Parts, parts, summarize

LOG_MAX = 700.0
"""Past this a log ratio is read as infinite (math.exp overflows at 709.8): an interval or a
detectable change with one degree of freedom (a window of two nights) can reach it."""


def ratio_of(log_ratio: float) -> float:
    """exp, infinite past LOG_MAX and 0 below -LOG_MAX instead of an OverflowError (or a ratio
    so small that 1 - it is 1 and its inverse overflows)."""
    if log_ratio > LOG_MAX:
        return math.inf
    return math.exp(log_ratio) if log_ratio >= -LOG_MAX else 0.0


def share_of(log_ratio: float) -> float:
    """expm1 (a change as a share: 0.25 = 25 % slower), infinite past LOG_MAX."""
    return math.inf if log_ratio > LOG_MAX else math.expm1(log_ratio)


POWER = 0.80
"""detectable_change's power: the convention of power analysis (Cohen)."""


@dataclass(frozen=True)
class Shift:
    """One row's (or band's) comparison of two sides' launches (nested.py's model)."""

    effect: float
    """D: mean log value, current minus baseline, in time terms (> 0: slower)."""
    se: float
    """Standard error of D."""
    df: float
    """Degrees of freedom of the t distribution of D / se (inf: known variance)."""
    variance: float
    """The launch part of the noise, sigma^2: launches of one night around their night's mean
    (posterior: squeezed towards its prior)."""
    within: float
    """The trial part inside it: a launch value's own bootstrap variance (nan: unknown)."""
    n_base: int
    n_current: int
    """Launches on each side."""
    prior_source: str
    """Where the launch part's prior came from (components.Prior.source)."""
    data_df: int
    """Degrees of freedom of the launch part from the launches themselves (0: the prior alone)."""
    night: float = 0.0
    """The night part, tau^2: what moves a whole night, or the drift floor where larger."""
    nights_base: int = 1
    nights_current: int = 1

    @property
    def ratio(self) -> float:
        """current / baseline in time terms (1.25: 25 % slower)."""
        return ratio_of(self.effect)

    @property
    def between(self) -> float:
        """The launch part beyond the trials' own noise (variance - within, at least 0)."""
        if not math.isfinite(self.within):
            return math.nan
        return max(0.0, self.variance - self.within)

    @property
    def t(self) -> float:
        return self.effect / self.se if self.se > 0 else math.copysign(math.inf, self.effect)

    def p_slower(self) -> float:
        """One-sided p-value of 'current is slower'."""
        return float(special.stdtr(self.df, -self.t))

    def p_faster(self) -> float:
        """One-sided p-value of 'current is faster'."""
        return float(special.stdtr(self.df, self.t))

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """The time ratio's two-sided `level` interval."""
        half = float(special.stdtrit(self.df, 0.5 + level / 2)) * self.se
        return ratio_of(self.effect - half), ratio_of(self.effect + half)

    def detectable(self, alpha: float, floor: float = 0.0, power: float = POWER) -> float:
        """The smallest slowdown (a share: 0.25 = 25 %) caught with `power` by a one-sided test
        at `alpha` that also needs the change past `floor` (module docstring)."""
        if not self.se > 0 or not math.isfinite(self.se):
            return math.inf
        critical = float(special.stdtrit(self.df, 1 - alpha)) * self.se
        reach = max(math.log1p(floor), critical) + float(special.stdtrit(self.df, power)) * self.se
        return share_of(reach)


def shift_of(
    effect: float, parts: Parts, trial: float, launches: tuple[int, int], nights: tuple[int, int],
    prior_source: str, data_df: int,
) -> Shift:  # fmt: skip
    variance = parts.variance
    se = math.sqrt(variance) if variance > 0 else 0.0
    df = parts.df
    return Shift(
        effect, se, df if df > 0 else math.inf, parts.sigma2, trial, launches[0], launches[1],
        prior_source, data_df, parts.tau2, nights[0], nights[1],
    )  # fmt: skip


def judge_shift(
    base: Sequence[LaunchValue], current: Sequence[LaunchValue], prior: Prior, drift: float = 0.0
) -> Shift:
    """The shift between two sides' launches (nested.py): the launch part from the launches'
    spread inside their nights, squeezed towards `prior` and never below the launches' own
    trial part; the night part from the nights' spread, never below `drift` (an sd, log)."""
    if not base or not current:
        raise ValueError("a shift needs launches on both sides")
    summaries = []
    for values in (base, current):
        index = {name: i for i, name in enumerate(dict.fromkeys(v.night for v in values))}
        y = np.array([[v.y] for v in values])
        within = np.array([[v.within] for v in values])
        nights = np.array([index[v.night] for v in values])
        summaries.append(summarize(y, within, nights, np.ones((1, 1))))
    b, c = summaries
    data_df = int(b.within_df[0] + c.within_df[0])
    data_var = (b.within_squares[0] + c.within_squares[0]) / data_df if data_df else math.nan
    sigma2, sigma_df = prior.squeeze(float(data_var), data_df)
    trial = float(np.nanmean([b.trial_part[0], c.trial_part[0]])) if not (
        math.isnan(b.trial_part[0]) and math.isnan(c.trial_part[0])
    ) else math.nan  # fmt: skip
    if math.isfinite(trial):
        sigma2 = max(sigma2, trial)
    found = parts(b, c, 0, sigma2, sigma_df, drift**2)
    return shift_of(
        float(c.mean[0] - b.mean[0]), found, trial, (len(base), len(current)),
        (int(b.nights[0]), int(c.nights[0])), prior.source, data_df,
    )  # fmt: skip
