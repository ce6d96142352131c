"""The intervals printed beside verdicts: chosen for their large change, at 95 % they held the
truth 85-87 % of the time (ci/bench_stats.py, a primitive 25 % slower: the winner's curse). At
their selection's level, 1 - 2 w R alpha / m, each tail the threshold the hypothesis's own
one-sided BH test passed: a verdict's interval leaves out no change on its side, and the share
of the verdicts' intervals that miss stays near alpha."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from distbench.stats.engine import Settings
from distbench.stats.family import Hypothesis, bh_adjust
from distbench.stats.shift import Shift
from distbench.stats.verdict import IMPROVED, REGRESSED, selected_level


def false_coverage(level_of: str, seed: int = 0, nights: int = 2000) -> float:
    """Mean over nights of the share of BH-selected intervals that miss the truth: 100
    hypotheses, 15 of them shifted by 2.5 standard errors, one-sided BH at 5 %."""
    rng = np.random.default_rng(seed)
    truth = np.r_[np.full(15, 2.5), np.zeros(85)]
    missed = []
    for _ in range(nights):
        t = truth + rng.standard_normal(100)
        q = np.array(bh_adjust(special.ndtr(-t).tolist()))
        chosen = q <= 0.05
        if not chosen.any():
            missed.append(0.0)
            continue
        level = selected_level(int(chosen.sum()), 100, 0.05) if level_of == "chosen" else 0.95
        half = special.ndtri(0.5 + level / 2)
        covers = np.abs(t - truth) <= half
        missed.append(float((~covers[chosen]).mean()))
    return float(np.mean(missed))


def test_the_level_of_a_verdicts_interval() -> None:
    assert selected_level(0, 100, 0.05) == 0.95  # nothing chosen: the row's own
    assert selected_level(10, 100, 0.05) == pytest.approx(0.99)
    assert selected_level(10, 100, 0.05, weight=4.0) == pytest.approx(0.96)
    assert selected_level(100, 100, 0.1) == pytest.approx(0.8)  # no floor at 95 %
    assert selected_level(100, 100, 0.05, weight=20.0) == 0.5


def test_selected_intervals_at_95_miss_too_often_and_at_the_level_do_not() -> None:
    assert false_coverage("plain") > 0.08  # the winner's curse
    assert false_coverage("chosen") <= 0.06


@pytest.mark.parametrize("seed", range(6))
def test_a_verdicts_interval_leaves_out_no_change_on_its_side(seed: int) -> None:
    """Weighted BH in two directions over rows and heavy broad bands: every regressed interval
    lies above no change, every improved one below (a level of 1 - R alpha / m printed
    'regressed: +4 % [-2, +11] %' for a broad hypothesis of weight 20)."""
    from distbench.stats.arrays import judged_outcome

    rng = np.random.default_rng(seed)
    rows = [Hypothesis("comm:all_reduce", (i,), ()) for i in range(40)]
    broad = [
        Hypothesis("comm:all_reduce", tuple(range(k, k + 10)), (("size_from", str(k)),))
        for k in (0, 10, 20, 30)
    ]
    family = rows + broad
    shifts: list[Shift | None] = []
    for _i in range(len(family)):
        effect = float(rng.choice([0.0, 0.15, -0.15])) + float(rng.normal(0, 0.05))
        se = float(rng.uniform(0.02, 0.08))
        shifts.append(Shift(effect, se, float(rng.choice([4.0, 12.0, math.inf])), se**2,
                            math.nan, 2, 2, "data", 4))  # fmt: skip
    settings = Settings(broad_share=0.8)
    outcome = judged_outcome(family, shifts, [0.0] * len(family), settings, "", (8, 1), False)
    verdicts = [j for j in (*outcome.rows, *outcome.bands) if j.state in (REGRESSED, IMPROVED)]
    assert verdicts, "the family must hold verdicts"
    for judged in verdicts:
        low, high = judged.interval()
        assert (low > -1e-12) if judged.state == REGRESSED else (high < 1e-12), judged


def test_the_box_rule_gives_its_hypotheses_back_the_rows_own_level() -> None:
    """A hypothesis the box rule turns into cannot tell has no verdict: its interval is 95 %."""
    from dataclasses import replace

    from distbench.stats.box import unjudged
    from distbench.stats.verdict import CONFIDENCE, Judged, describe_change

    shift = Shift(0.2, 0.05, 12.0, 0.0025, math.nan, 2, 2, "data", 4)
    chosen = Judged(Hypothesis("comm:all_reduce", (0,), ()), shift, 1e-4, 1.0, 1e-3, 1.0,
                    REGRESSED, 0.1, 0.05, "", 0.99)  # fmt: skip
    assert describe_change(chosen).endswith("] % at 99.0 %")
    (back,) = unjudged([chosen])
    assert back.level == CONFIDENCE and " at " not in describe_change(back)  # 95 %: no level
    assert describe_change(replace(back)).endswith("] %")  # a percent is labelled as one


def test_one_degree_of_freedom_reads_as_seeing_nothing_not_a_crash() -> None:
    """A window of two nights leaves a row's t one degree of freedom: its critical t at
    Bonferroni's level over 343 hypotheses is about 2,000, and exp of that many standard errors
    overflowed (an OverflowError that ci/nightly.sh read as a confirmed regression, night after
    night). Now the row would catch nothing (an infinite detectable change, cannot tell) and
    its interval's ends are finite or infinite, never an error."""
    from distbench.stats.arrays import judged_outcome
    from distbench.stats.verdict import CANNOT_TELL

    family = [Hypothesis("comm:all_reduce", (i,), ()) for i in range(343)]
    shifts: list[Shift | None] = [
        Shift(0.01 * (i % 7), 0.4, 1.0, 0.16, math.nan, 2, 3, "data", 1) for i in range(343)
    ]
    outcome = judged_outcome(family, shifts, [0.05] * 343, Settings(), "", (2, 1), False)
    judged = [*outcome.rows, *outcome.bands]
    assert all(math.isinf(j.detectable) for j in judged)
    assert {j.state for j in judged} == {CANNOT_TELL}
    assert shifts[0] is not None and shifts[0].detectable(0.05 / 343) == math.inf
    low, high = Shift(0.0, 0.6, 1.0, 0.36, math.nan, 2, 3, "data", 1).interval(1 - 1e-9)
    assert low == 0.0 or (low > 0 and high == math.inf)


def test_a_high_threshold_is_not_noise_it_cannot_see_through() -> None:
    """`--threshold 3000%` puts every detectable change past 10x, but the rows' noise is small:
    they see (no change seen, with that detectable change), they are not `cannot tell`; a row
    without any noise (se 0) sees too."""
    from distbench.stats.arrays import judged_outcome
    from distbench.stats.verdict import NO_CHANGE

    family = [Hypothesis("comm:all_reduce", (i,), ()) for i in range(4)]
    shifts: list[Shift | None] = [Shift(0.01, 0.02, 30.0, 4e-4, math.nan, 2, 3, "data", 10)] * 3
    shifts.append(Shift(0.0, 0.0, 30.0, 0.0, math.nan, 2, 3, "data", 10))
    outcome = judged_outcome(family, shifts, [30.0] * 4, Settings(), "", (8, 1), False)
    judged = [*outcome.rows, *outcome.bands]
    assert all(j.detectable > 9 for j in judged)
    assert {j.state for j in judged} == {NO_CHANGE}
