"""The four states of a verdict, the only words compare, the gate, report and history use:

- regressed:       slower, past the multiplicity rule (BH over the declared family) and past the
                   threshold floor;
- improved:        the same, faster;
- no change seen:  neither, with the smallest slowdown the comparison would have caught
                   (detectable_change) beside it: "no change seen (would catch >= 18 %)";
- cannot tell:     neither, and the comparison cannot vouch for its noise: the baseline window is
                   still learning it (fewer nights than --min-nights), a side has no launch, or
                   its noise hides any change below 10x (BLIND: a window of two nights leaves a
                   row one degree of freedom), as history says of a case that could see nothing.

"no change seen" is not "unchanged": a row whose detectable change is 60 % may have slowed by 40 %.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from distbench.stats.family import Hypothesis
from distbench.stats.shift import Shift

REGRESSED, IMPROVED, NO_CHANGE, CANNOT_TELL = (
    "regressed",
    "improved",
    "no change seen",
    "cannot tell",
)
STATES = (REGRESSED, IMPROVED, NO_CHANGE, CANNOT_TELL)
CONFIDENCE = 0.95
"""The level of a hypothesis's interval before selection (Judged.level)."""


@dataclass(frozen=True)
class Judged:
    """One hypothesis (a row, or a band of rows) of a comparison, judged."""

    hypothesis: Hypothesis
    shift: Shift | None
    """None when a side has no launch value (nothing to compare)."""
    p_slower: float
    p_faster: float
    q_slower: float
    """Benjamini-Hochberg over the family (slower)."""
    q_faster: float
    state: str
    detectable: float
    """detectable_change: the smallest slowdown (share) caught with 80 % power at the level this
    hypothesis is tested at; inf when nothing could be caught."""
    floor: float
    """The threshold floor (share) a change must pass as well."""
    reason: str = ""
    """Why cannot tell (learning the noise: 3 of 5 nights; no launch on one side)."""
    level: float = CONFIDENCE
    """The level of its interval (interval()): 95 %, or for a hypothesis selected as regressed
    or improved, its selection's (selected_level: 1 - 2 w R alpha / m), which leaves out no
    change on the verdict's side and keeps the share of the verdicts' intervals that miss near
    alpha (measured: docs/gate.md), where at 95 % they missed 13-15 % of the time."""

    @property
    def change(self) -> float:
        """current / baseline - 1 in time terms (0.24: 24 % slower); nan without a shift."""
        return self.shift.ratio - 1 if self.shift is not None else math.nan

    def interval(self, level: float | None = None) -> tuple[float, float]:
        """The change's interval as shares (-0.05, 0.31), at `level` (default: the hypothesis's
        own, `level`); nans without a shift."""
        if self.shift is None:
            return math.nan, math.nan
        low, high = self.shift.interval(self.level if level is None else level)
        return low - 1, high - 1


def selected_level(rejected: int, tested: int, alpha: float, weight: float = 1.0) -> float:
    """The level of the interval of a hypothesis selected as regressed (or improved): one of
    `rejected` hypotheses whose one-sided (weighted) Benjamini-Hochberg test in that direction
    passed among `tested`, its weight `weight`: 1 - 2 x weight x rejected x alpha / tested.

    Why: an interval at 95 % holds the truth 95 % of the time before anything is chosen; the
    ones beside a verdict were chosen for their large change, and at 95 % held it 85-87 % of the
    time (ci/bench_stats.py, a primitive 25 % slower: the winner's curse). Benjamini and
    Yekutieli (2005, "False discovery rate-adjusted multiple confidence intervals for selected
    parameters", JASA 100:71-81) widen the selected intervals to 1 - R q / m, which keeps their
    false coverage rate (the mean share of the selected intervals that miss) at most q for a
    BH-type selection of independent estimates. Here each tail is weight x R x alpha / m, the
    threshold the hypothesis's own one-sided test passed (BH at alpha in each direction is BH at
    2 alpha on two-sided p-values): so a verdict's interval always leaves out no change on its
    side, which a level of 1 - R alpha / m did not (a broad hypothesis of weight 20 was called
    regressed beside +4 % [-2, +11]). The family's estimates are not independent (bands nest
    rows, rows share launches), so the rate is measured, not guaranteed (docs/gate.md). At
    least 50 % (a level so low needs half a heavy family selected)."""
    if tested <= 0 or rejected <= 0:
        return CONFIDENCE
    return min(1.0, max(0.5, 1 - 2 * weight * rejected * alpha / tested))


BLIND = "would catch nothing below 10x"
"""Why a hypothesis that is neither regressed nor improved cannot tell, where what it could see
(its detectable change) is no change at all (`sees`): "no change seen" would vouch for it."""


def decide_state(
    shift: Shift | None, q_slower: float, q_faster: float, alpha: float, floor: float,
    learning: str, noise_reach: float,
) -> tuple[str, str]:  # fmt: skip
    """The state of one hypothesis and, for cannot tell, why. `learning` is '' once the noise
    is known, else its reason ('learning the noise: 3 of 5 nights'); `noise_reach`: the
    smallest slowdown its noise lets it catch, the threshold floor left out (BLIND where that is
    no change below 10x: a floor of 900 % is the user's choice, not noise it cannot see
    through)."""
    if shift is None:
        return CANNOT_TELL, "no launch on one side"
    past = abs(shift.effect) > math.log1p(floor)
    if q_slower <= alpha and shift.effect > 0 and past:
        return REGRESSED, ""
    if q_faster <= alpha and shift.effect < 0 and past:
        return IMPROVED, ""
    if learning:
        return CANNOT_TELL, learning
    if not sees(noise_reach):
        return CANNOT_TELL, BLIND
    return NO_CHANGE, ""


def describe_change(judged: Judged) -> str:
    """'+24 % [+17, +31] %': the change in time terms with its interval (95 %, or beside a
    verdict its level: '+24 % [+12, +38] % at 99.3 %', Judged.level)."""
    low, high = judged.interval()
    if not math.isfinite(judged.change):
        return "-"
    interval = f"[{low * 100:+.0f}, {high * 100:+.0f}] %{level_text(judged.level)}"
    return f"{judged.change * 100:+.0f} % {interval}"


def level_text(level: float) -> str:
    """' at 98.7 %' for an interval not at 95 % (a verdict's: selected_level), else '' (nan:
    95 %, a cell without a level)."""
    if level != level or abs(level - CONFIDENCE) < 1e-12:
        return ""
    return f" at {level * 100:.1f} %"


def describe_state(judged: Judged) -> str:
    """The state as printed: 'no change seen (would catch >= 18 %)', 'cannot tell: learning
    the noise (3 of 5 nights)', 'regressed'."""
    if judged.state == NO_CHANGE:
        return f"{NO_CHANGE} ({catch_text(judged.detectable)})"
    if judged.state == CANNOT_TELL and judged.reason:
        return f"{CANNOT_TELL}: {judged.reason}"
    return judged.state


def sees(detectable: float) -> bool:
    """Whether a detectable change is one to print (below 10x: a larger one says nothing)."""
    return math.isfinite(detectable) and detectable <= 9


def catch_text(detectable: float) -> str:
    """'would catch >= 18 %', or that it would catch nothing below 10x."""
    if not sees(detectable):
        return "would catch nothing below 10x"
    return f"would catch >= {detectable * 100:.0f} %"
