"""Two sides' launches of one row (or band): how far apart they are, how sure that is, and the
smallest change this comparison could have seen.

The model, in log terms (y = log time; a bandwidth's log negated), one row:

    y(launch) = mu(side) + e(launch),   e ~ N(0, sigma^2), independent between launches

sigma^2 is a launch value's variance (components.py: its within- and between-launch parts). The
shift is D = mean(y current) - mean(y baseline), with

    se(D) = s * sqrt(1/n_base + 1/n_current)

where s^2 pools both sides' spread around their own means and is squeezed towards the prior
of similar rows (components.Prior), so t = D / se(D) has a t distribution with the posterior
degrees of freedom (d0 + n_base + n_current - 2) when nothing changed: the p-value, the
interval exp(D -+ t se) of the time ratio, and the power calculation all follow from it.

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

from scipy import special

from distbench.stats.components import LaunchValue, Prior, pooled_variance

POWER = 0.80
"""detectable_change's power: the convention of power analysis (Cohen)."""


@dataclass(frozen=True)
class Shift:
    """One row's (or band's) comparison of two sides' launches."""

    effect: float
    """D: mean log value, current minus baseline, in time terms (> 0: slower)."""
    se: float
    """Standard error of D."""
    df: float
    """Degrees of freedom of the t distribution of D / se (inf: known variance)."""
    variance: float
    """A launch value's variance used (posterior)."""
    within: float
    """Its within-launch part: the mean bootstrap variance over the launches (nan: unknown)."""
    n_base: int
    n_current: int
    prior_source: str
    """Where the variance's prior came from (components.Prior.source)."""
    data_df: int
    """Degrees of freedom from the launches themselves (0: the prior alone)."""

    @property
    def ratio(self) -> float:
        """current / baseline in time terms (1.25: 25 % slower)."""
        return math.exp(self.effect)

    @property
    def between(self) -> float:
        """The between-launch part of the variance (variance - within, at least 0)."""
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
        return math.exp(self.effect - half), math.exp(self.effect + half)

    def detectable(self, alpha: float, floor: float = 0.0, power: float = POWER) -> float:
        """The smallest slowdown (a share: 0.25 = 25 %) caught with `power` by a one-sided test
        at `alpha` that also needs the change past `floor` (module docstring)."""
        if not self.se > 0 or not math.isfinite(self.se):
            return math.inf
        critical = float(special.stdtrit(self.df, 1 - alpha)) * self.se
        reach = max(math.log1p(floor), critical) + float(special.stdtrit(self.df, power)) * self.se
        return math.expm1(reach)


def judge_shift(base: Sequence[LaunchValue], current: Sequence[LaunchValue], prior: Prior) -> Shift:
    """The shift between two sides' launches (module docstring). The variance: both sides'
    pooled spread squeezed towards `prior`; never below the launches' own within-launch
    variance, which every launch value carries whatever the others say."""
    if not base or not current:
        raise ValueError("a shift needs launches on both sides")
    ys_base, ys_cur = [v.y for v in base], [v.y for v in current]
    data_var, data_df = pooled_variance([ys_base, ys_cur])
    variance, df = prior.squeeze(data_var, data_df)
    withins = [v.within for v in (*base, *current) if math.isfinite(v.within)]
    within = math.fsum(withins) / len(withins) if withins else math.nan
    if math.isfinite(within):
        variance = max(variance, within)
    effect = math.fsum(ys_cur) / len(ys_cur) - math.fsum(ys_base) / len(ys_base)
    se = math.sqrt(variance * (1 / len(base) + 1 / len(current))) if variance > 0 else 0.0
    return Shift(
        effect, se, df if df > 0 else math.inf, variance, within, len(base), len(current),
        prior.source, data_df,
    )  # fmt: skip
