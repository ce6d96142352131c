"""A speedup and its interval from a shift whose interval runs out of floating point (a window of
two nights: one degree of freedom, one stalled night): the report divided by zero there."""

from __future__ import annotations

import math

from distbench.reports.report.verdicts import speedup_of
from distbench.stats.family import Hypothesis
from distbench.stats.shift import Shift, ratio_of
from distbench.stats.verdict import CANNOT_TELL, Judged


def judged(se: float) -> Judged:
    shift = Shift(0.0, se, 1.0, se * se, math.nan, 2, 3, "data", 1)
    return Judged(Hypothesis("comm:all_reduce", (0,), ()), shift, 0.5, 0.5, 1.0, 1.0,
                  CANNOT_TELL, math.inf, 0.05, "")  # fmt: skip


def test_an_interval_past_floating_point_reads_as_unbounded() -> None:
    assert ratio_of(-800.0) == 0.0 and ratio_of(800.0) == math.inf and ratio_of(0.0) == 1.0
    speedup, low, high = speedup_of(judged(4.0))  # its log ends near -51 and +51
    assert speedup == 1.0 and 0 < low < 1e-20 and high > 1e20
    speedup, low, high = speedup_of(judged(100.0))  # past exp's range: 0 and inf
    assert speedup == 1.0 and low == 0.0 and high == math.inf
