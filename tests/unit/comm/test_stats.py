"""Exact tests of the statistics and bandwidth formulas, and of the p50's interval over trials."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import stats

from distbench.primitives import get_primitive
from distbench.stats import Stats, algbw_gbps, percentile
from distbench.stats.intervals import (
    clustered_median_interval,
    median_interval,
    t_quantile,
    trial_interval,
)


def test_percentiles_interpolate_linearly() -> None:
    values = [1.0, 2.0, 3.0, 4.0]
    assert percentile(values, 50) == 2.5
    assert percentile(values, 0) == 1.0
    assert percentile(values, 100) == 4.0
    assert percentile(values, 95) == pytest.approx(3.85)
    assert percentile([7.0], 99) == 7.0


def test_stats_columns() -> None:
    stats = Stats((4.0, 1.0, 3.0, 2.0, 10.0))
    columns = stats.as_columns()
    assert columns["time_us_p50"] == 3.0
    assert columns["time_us_mean"] == 4.0
    assert columns["time_us_min"] == 1.0
    assert columns["time_us_max"] == 10.0
    assert columns["time_us_p95"] == pytest.approx(8.8)
    assert columns["time_us_p99"] == pytest.approx(9.76)
    assert columns["time_us_std"] == pytest.approx(math.sqrt(12.5))
    assert Stats((5.0,)).std == 0.0
    with pytest.raises(ValueError):
        Stats(())


def test_algbw_is_bytes_per_second_over_1e9() -> None:
    # 1 GB in 1 s = 1 GB/s; 64 MiB in 1000 us = 67.108864 GB/s
    assert algbw_gbps(1_000_000_000, 1e6) == pytest.approx(1.0)
    assert algbw_gbps(64 << 20, 1000.0) == pytest.approx(67.108864)
    assert algbw_gbps(1024, 0.0) == 0.0


@pytest.mark.parametrize(("n", "factor"), [(1, 0.0), (2, 1.0), (4, 1.5), (8, 1.75)])
def test_all_reduce_busbw_factor(n: int, factor: float) -> None:
    assert get_primitive("all_reduce").busbw_factor(n) == factor


# ---- the p50's interval over trials (stats/intervals.py) -----------------------------------------


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 11, 29, 49, 200, 1e6])
def test_t_quantiles_match_scipy(df: float) -> None:
    for p in (0.6, 0.9, 0.975, 0.995, 0.025):
        assert t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-8)
    assert t_quantile(0.975, math.inf) == pytest.approx(1.959964, rel=1e-6)


def test_median_interval_interpolates_between_order_statistics() -> None:
    """n = 10: [x(2), x(9)] covers 97.85 %, [x(3), x(8)] 89.06 %; Hettmansperger and Sheather's
    weight moves both ends from the wide pair towards the narrow one so that 95 % is reached."""
    wide, narrow = 1 - 2 * 11 / 1024, 1 - 2 * 56 / 1024
    share = (wide - 0.95) / (wide - narrow)
    weight = 8 * share / (2 + 6 * share)
    low, high = median_interval([float(v) for v in range(1, 11)])
    assert (low, high) == pytest.approx((2 + weight, 9 - weight))
    assert all(math.isnan(v) for v in median_interval([1.0, 2.0, 3.0, 4.0, 5.0]))  # 93.75 % max


def woodruff_oracle(trials: list[list[float]]) -> tuple[float, float]:
    """A second implementation (numpy) of Woodruff's interval with the trials as clusters."""
    pooled = np.sort(np.concatenate(trials))
    median = np.percentile(pooled, 50)
    below = np.array(
        [np.sum(np.array(t) < median) + 0.5 * np.sum(np.array(t) == median) for t in trials]
    )
    sizes = np.array([len(t) for t in trials])
    share = below.sum() / sizes.sum()
    units = len(trials)
    se = np.sqrt(units / (units - 1) * np.sum((below - share * sizes) ** 2)) / sizes.sum()
    reach = stats.t.ppf(0.975, units - 1) * se
    if not 0 <= share - reach <= share + reach <= 1:
        return math.nan, math.nan
    low, high = np.percentile(pooled, [100 * (share - reach), 100 * (share + reach)])
    return float(low), float(high)


def test_clustered_interval_matches_an_independent_implementation() -> None:
    rng = random.Random(5)
    for _ in range(20):
        trials = [[rng.lognormvariate(shift, 0.2) for _ in range(20)] for shift in
                  [rng.gauss(0, 0.1) for _ in range(rng.randint(4, 30))]]  # fmt: skip
        assert clustered_median_interval(trials) == pytest.approx(
            woodruff_oracle(trials), nan_ok=True
        )
    # too few trials for how much they disagree: the quantiles would leave the data
    apart = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]
    assert all(math.isnan(v) for v in clustered_median_interval(apart))
    assert all(math.isnan(v) for v in clustered_median_interval([[1.0, 2.0, 3.0]]))


def test_trial_interval_takes_one_unit_per_trial() -> None:
    values = [float(v) for v in range(1, 11)]
    assert trial_interval(values, 10) == median_interval(values)  # one sample a trial
    chunks = [values[:5], values[5:]]
    assert trial_interval(values, 2) == clustered_median_interval(chunks)
    assert Stats(tuple(values), 2).p50_ci() == clustered_median_interval(chunks)
    with pytest.raises(ValueError, match="equal trials"):
        Stats(tuple(values), 3)


def test_ops_of_one_trial_count_once() -> None:
    """Latency mode: 12 trials of 10 ops whose trials differ (a shift per trial, 10 %). Over 400
    simulated rows the interval over trials holds the true p50 about 95 % of the time; counting
    every op as independent (0.2.0) held it about half the time."""
    rng = random.Random(11)
    truth = 1.0  # the median of shift x op noise, both symmetric in log terms around 0
    held = {"trials": 0, "ops": 0}
    for _ in range(400):
        shifts = [rng.gauss(0, 0.1) for _ in range(12)]
        samples = tuple(math.exp(s + rng.gauss(0, 0.05)) for s in shifts for _ in range(10))
        for name, stats_of in (("trials", Stats(samples, 12)), ("ops", Stats(samples))):
            low, high = stats_of.p50_ci()
            held[name] += low <= truth <= high  # no interval (NaN) holds nothing
    assert held["trials"] / 400 > 0.9
    assert held["ops"] / 400 < 0.7
