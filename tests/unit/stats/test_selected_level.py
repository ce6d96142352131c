"""The intervals printed beside verdicts: chosen for their large change, at 95 % they held the
truth 85-87 % of the time (ci/bench_stats.py, a primitive 25 % slower: the winner's curse). At
Benjamini and Yekutieli's level, 1 - R alpha / m, their false coverage rate stays <= alpha."""

from __future__ import annotations

import numpy as np
from scipy import special

from distbench.stats.family import bh_adjust
from distbench.stats.verdict import selected_level


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
        level = selected_level(int(chosen.sum()), 100, 0.05) if level_of == "by" else 0.95
        half = special.ndtri(0.5 + level / 2)
        covers = np.abs(t - truth) <= half
        missed.append(float((~covers[chosen]).mean()))
    return float(np.mean(missed))


def test_the_level_of_a_verdicts_interval() -> None:
    assert selected_level(0, 100, 0.05) == 0.95
    assert selected_level(10, 100, 0.05) == 0.995
    assert selected_level(100, 100, 0.05) == 0.95  # never below 95 %


def test_selected_intervals_at_95_miss_too_often_and_at_the_level_do_not() -> None:
    assert false_coverage("plain") > 0.08  # the winner's curse
    assert false_coverage("by") <= 0.05
