"""ci/stats_blocks.py and ci/bench_blocks.py's simulation: the block interval of a per-night rate
is Clopper-Pearson on the effective number of nights, from a bootstrap that resamples windows and
runs of consecutive nights. It skips nights not judged, is Clopper-Pearson itself for nights that
do not cluster (never a point when none or all failed), is wider when failures come in episodes,
and in the simulated episodic replays holds the true rate more often."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.paths import ROOT

sys.path.insert(0, str(ROOT / "ci"))
from bench_blocks import coverage, simulate
from stats_blocks import block_interval
from stats_gate import clopper_pearson, rate_of


def test_a_rate_that_never_or_always_fires_keeps_clopper_pearsons_width() -> None:
    assert block_interval(np.zeros((3, 20))) == (*clopper_pearson(0, 60), 60)
    low, high, n_eff = block_interval(np.ones((3, 20, 4)))
    assert (high, n_eff) == (1.0, 240) and low == pytest.approx(clopper_pearson(240, 240)[0])


def test_nights_not_judged_count_neither_way() -> None:
    grid = np.zeros((2, 10))
    grid[:, :5] = np.nan  # in the window: never judged, even if they would have failed
    assert block_interval(grid) == (*clopper_pearson(0, 10), 10)
    rate = rate_of("A/A", grid)
    assert (rate.hits, rate.n) == (0, 10)


def test_episodes_widen_the_interval_beyond_clopper_pearson() -> None:
    """One episode of four failed nights seen by all six windows: 24 hits in 240 judgements, as
    independent a narrow interval; as one episode, the rate could as well be 0 or twice as
    high."""
    grid = np.zeros((6, 40))
    grid[:, 20:24] = 1
    low, high, n_eff = block_interval(grid)
    cp_low, cp_high = clopper_pearson(24, 240)
    assert low < cp_low and high > cp_high
    assert n_eff < 240 / 10  # the six windows saw one episode: worth far fewer than 240 nights


def test_simulated_episodes_are_held_more_often_by_blocks() -> None:
    rng = np.random.default_rng(1)
    outcomes, truth, _episode = simulate(rng, 6, 40)
    assert outcomes.shape == (6, 40) and 0 < truth < 1
    held = coverage(runs=60, windows=6, nights=40, reps=200, seed=3)
    assert held["blocks"] > held["clopper-pearson"]
    assert set(held) == {"clopper-pearson", "percentiles", "blocks", "no episode"}
    assert held["blocks"] <= 1 - held["no episode"] + 0.1  # no interval sees episodes not seen
