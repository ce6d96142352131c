"""distbench.stats, the statistical core. The half that launches or runs for seconds; the in-process
half, and the file's whole story: tests/unit/stats/test_core.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from distbench.stats.components import (
    Prior,
)
from distbench.stats.shift import judge_shift
from tests.unit.stats.test_core import values


def test_detectable_change_has_the_power_it_claims() -> None:
    """Simulated two-sample comparisons with the true shift at detectable_change: rejected at
    the stated level in 80 % of them (the t test's own noncentral power)."""
    rng = np.random.default_rng(7)
    sd, n_base, n_cur, alpha = 0.1, 10, 2, 0.001
    known = Prior(sd**2, 1e9, "known")  # one night a side: the launch part alone
    probe = judge_shift(
        values([0.0] * n_base, "n", n_base), values([0.0] * n_cur, "c", n_cur), known
    )
    size = math.log1p(probe.detectable(alpha))
    hits = 0
    for _ in range(4000):
        b = rng.normal(0.0, sd, n_base).tolist()
        c = (rng.normal(0.0, sd, n_cur) + size).tolist()
        judged = judge_shift(values(b, "n", n_base), values(c, "c", n_cur), known)
        hits += judged.p_slower() <= alpha
    assert hits / 4000 == pytest.approx(0.80, abs=0.025)
    floored = probe.detectable(alpha, floor=0.5)
    assert floored > 0.5 and floored == pytest.approx(
        math.expm1(math.log(1.5) + 0.8416 * probe.se), rel=1e-3
    )
