"""The latency-bandwidth fit t = alpha + size / beta: exact on exact data, alpha from the small
sizes and beta from the large ones (an NCCL-like curve keeps its latency), quality in relative
error, and intervals with the degrees of freedom each end's fit leaves (none below 9 sizes)."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest

from distbench.reports.report.fit import MAX_REL_RMS, fit_groups, fit_latency_bandwidth
from distbench.stats.intervals import t_quantile

SIZES = [1024, 16384, 262144, 1048576, 4194304]


def model(alpha_us: float, beta_gbps: float) -> list[float]:
    # beta GB/s = beta * 1e3 bytes per µs
    return [alpha_us + s / (beta_gbps * 1e3) for s in SIZES]


@pytest.mark.parametrize(("alpha", "beta"), [(25.0, 12.5), (3.0, 180.0), (400.0, 0.9)])
def test_exact_data_recovers_alpha_and_beta(alpha: float, beta: float) -> None:
    fit = fit_latency_bandwidth(SIZES, model(alpha, beta))
    assert fit.alpha_us == pytest.approx(alpha, rel=1e-9)
    assert fit.beta_GBps == pytest.approx(beta, rel=1e-9)
    assert fit.rel_rms == pytest.approx(0.0, abs=1e-12)
    assert fit.rel_max == pytest.approx(0.0, abs=1e-12)
    assert fit.points == 5
    assert fit.split and fit.alpha_sizes == (1024, 16384) and fit.beta_sizes == (1048576, 4194304)
    assert fit.predict_us(2**20) == pytest.approx(alpha + 2**20 / (beta * 1e3), rel=1e-9)


def test_two_sizes_are_solved_exactly() -> None:
    # t(1000) = 11, t(3000) = 13 -> slope 1e-3 µs/B = 1 GB/s, alpha 10 µs
    fit = fit_latency_bandwidth([1000, 3000], [11.0, 13.0])
    assert fit.alpha_us == pytest.approx(10.0)
    assert fit.beta_GBps == pytest.approx(1.0)
    assert not fit.split  # too few sizes: alpha is the intercept of one line through all
    # A line through two points leaves no residual: no interval, not a zero-width one.
    assert all(math.isnan(v) for v in (*fit.alpha_interval, *fit.beta_interval))


def test_relative_weighting_keeps_alpha_from_small_sizes() -> None:
    # A 10 % error at the largest size (4.2 ms) must not wipe out the 20 µs intercept, as plain
    # least squares would (that error alone is 400 µs).
    times = model(20.0, 10.0)
    times[-1] *= 1.10
    fit = fit_latency_bandwidth(SIZES, times)
    assert fit.alpha_us == pytest.approx(20.0)  # from the small sizes alone
    # beta comes from the two largest sizes, so it reads the 10 % as slower bandwidth
    assert 8.0 < fit.beta_GBps < 10.0
    assert fit.rel_rms < 0.1


def test_flat_times_give_infinite_beta_and_the_weighted_mean() -> None:
    # Time that does not grow with size (latency-bound): the slopes would be negative, so the
    # boundary fit beta = infinity is taken; alpha = sum(1/t) / sum(1/t^2) over the small sizes.
    times = [100.0, 90.0, 110.0, 100.0, 95.0]
    fit = fit_latency_bandwidth(SIZES, times)
    assert math.isinf(fit.beta_GBps)
    small = times[:2]
    assert fit.alpha_us == pytest.approx(sum(1 / t for t in small) / sum(1 / t**2 for t in small))
    assert fit.rel_max == pytest.approx(abs(fit.alpha_us - 110.0) / 110.0)


def nccl_like_us(size: int) -> float:
    """NCCL picks the fastest protocol per size: min over (latency µs, bandwidth GB/s) of LL,
    LL128 and Simple. The time a small message takes is LL's 10 µs."""
    protocols = ((10.0, 5.0), (20.0, 60.0), (35.0, 180.0))
    return min(latency + size / (bandwidth * 1e3) for latency, bandwidth in protocols)


@pytest.mark.parametrize("ladder", ["nccl-tests 8B-8G x2", "distbench 1K-1G x4"])
def test_nccl_like_curve_keeps_the_small_message_latency(ladder: str) -> None:
    sizes = (
        [8 * 2**i for i in range(31)]
        if ladder.startswith("nccl")
        else [1024 * 4**i for i in range(11)]
    )
    times = [nccl_like_us(s) for s in sizes]
    fit = fit_latency_bandwidth(sizes, times)
    # One relative fit over every size gave alpha 11.6 and 13.3 µs (R² 0.99): the mid sizes,
    # where LL128 runs at a third of Simple's bandwidth, pull the intercept up.
    assert fit.alpha_us == pytest.approx(10.0, rel=0.02)
    assert fit.beta_GBps == pytest.approx(180.0, rel=0.02)
    # The quality says what the two numbers leave out, in the relative error the fit minimises.
    assert fit.rel_max > 0.3 and fit.rel_rms < fit.rel_max


def test_negative_intercept_is_clamped_to_zero() -> None:
    # Pure bandwidth with a slightly slow small size would give alpha < 0 unconstrained.
    times = [s / 1e3 for s in SIZES]  # 1 GB/s, no latency
    times[0] *= 0.5
    fit = fit_latency_bandwidth(SIZES, times)
    assert fit.alpha_us == 0.0
    assert fit.beta_GBps > 0


@pytest.mark.parametrize(
    ("sizes", "times"),
    [([1024, 1024], [1.0, 2.0]), ([1024], [1.0]), ([1, 2], [1.0, 0.0]), ([1, 2], [1.0])],
)
def test_bad_input_is_refused(sizes: list[int], times: list[float]) -> None:
    with pytest.raises(ValueError):
        fit_latency_bandwidth(sizes, times)


def test_fit_groups_one_row_per_group_and_busbw_factor() -> None:
    rows = pd.DataFrame(
        {
            "primitive": ["all_reduce"] * 5 + ["broadcast"] * 5 + ["reduce"],
            "size_bytes": SIZES * 2 + [1024],
            "time_us_p50": model(10.0, 2.0) + model(5.0, 4.0) + [7.0],
            "busbw_factor": [1.5] * 5 + [1.0] * 5 + [1.0],
        }
    )
    table = fit_groups(rows, ["primitive"])
    assert table["primitive"].tolist() == ["all_reduce", "broadcast"]  # reduce: one size, left out
    first = table.iloc[0]
    assert first["alpha_us"] == pytest.approx(10.0)
    assert first["beta_GBps"] == pytest.approx(2.0)
    assert first["busbw_beta_GBps"] == pytest.approx(3.0)
    assert (first["alpha_from_bytes"], first["beta_to_bytes"]) == (1024, 4194304)
    assert table.iloc[1]["beta_GBps"] == pytest.approx(4.0)


LADDER = [1024 * 4**i for i in range(9)]  # the default gloo ladder, 1K-64M: three sizes an end


def test_intervals_are_each_end_s_weighted_least_squares_t_interval() -> None:
    """alpha's interval from the three smallest sizes alone: the relative fit is ordinary least
    squares of 1 on [1/t, s/t], so its textbook interval (s^2 (A'A)^-1, t with 3 - 2 = 1 degree
    of freedom) is the oracle; beta's the same way over the three largest, inverted."""
    rng = random.Random(3)
    times = [(30.0 + s / 2e3) * math.exp(rng.gauss(0, 0.05)) for s in LADDER]
    fit = fit_latency_bandwidth(LADDER, times)
    assert fit.split and fit.df == 1
    for sizes, index, interval in ((LADDER[:3], 0, fit.alpha_interval), (LADDER[-3:], 1, None)):
        t = np.array(times[:3] if index == 0 else times[-3:])
        design = np.column_stack([1 / t, np.array(sizes) / t])
        coef, residual, *_ = np.linalg.lstsq(design, np.ones(3), rcond=None)
        se = math.sqrt(residual[0] / 1 * np.linalg.inv(design.T @ design)[index, index])
        low, high = coef[index] - t_quantile(0.975, 1) * se, coef[index] + t_quantile(0.975, 1) * se
        if interval is None:  # beta = 1e-3 / slope: the slope's ends, inverted and swapped
            interval = (1e-3 / fit.beta_interval[1], 1e-3 / fit.beta_interval[0])
        assert interval == pytest.approx((max(low, 0.0), high))


@pytest.mark.parametrize("count", [2, 3, 4, 5, 8])
def test_fewer_than_nine_sizes_get_no_interval(count: int) -> None:
    """4-8 sizes split two and two (no residual an end); 2-3 sizes are one fit whose variance
    mixes the noisiest and quietest size. 0.2.0 bootstrapped 1-3 residuals here and covered
    48-70 %."""
    times = [(30.0 + s / 2e3) * (1.1 if i % 2 else 0.9) for i, s in enumerate(LADDER[:count])]
    fit = fit_latency_bandwidth(LADDER[:count], times)
    assert all(math.isnan(v) for v in (*fit.alpha_interval, *fit.beta_interval))


def test_intervals_cover_95_percent_of_fits() -> None:
    """400 fits of 9 sizes, each p50 5 % off the model (log-normal): alpha's and beta's
    intervals held the true values in 378 of 400 (94.5 %; the normal quantile instead of t with
    1 degree of freedom: 263 and 285). ci/bench_stats_intervals.py does this on recorded scatter.
    """
    rng = random.Random(9)
    held = [0, 0]
    for _ in range(400):
        times = [(30.0 + s / 2e3) * math.exp(rng.gauss(0, 0.05)) for s in LADDER]
        fit = fit_latency_bandwidth(LADDER, times)
        held[0] += fit.alpha_interval[0] <= 30.0 <= fit.alpha_interval[1]
        held[1] += fit.beta_interval[0] <= 2.0 <= fit.beta_interval[1]
    assert 0.92 <= held[0] / 400 <= 0.98
    assert 0.92 <= held[1] / 400 <= 0.98


def test_a_fit_through_noise_is_marked() -> None:
    clean = [50 + s / 2e3 for s in LADDER]
    fit = fit_latency_bandwidth(LADDER, clean)
    assert not fit.noise and fit.rel_rms < 1e-9
    assert fit.alpha_interval[0] <= 50 <= fit.alpha_interval[1]
    assert fit.beta_interval[0] <= 2.0 <= fit.beta_interval[1]
    swinging = [t * f for t, f in zip(clean, (1, 3, 0.4, 2.5, 1, 3, 0.4, 2.5, 1), strict=True)]
    noisy = fit_latency_bandwidth(LADDER, swinging)
    assert noisy.noise and noisy.rel_rms > MAX_REL_RMS


def test_the_report_names_what_each_fit_came_from_and_why_no_figure() -> None:
    """A new user's report of `--sizes 1M,64M` showed a two-size fit as `all (intercept)` under
    "β from sizes" (β is a slope) and closed with "no line has two or more sizes" beside it; its
    prose promised bootstrap intervals that the core replaced with weighted least squares."""
    from distbench.reports.render import TableOut
    from distbench.reports.report.sections.fit import fit_section, size_range
    from distbench.stats.fit import INTERVAL_SIZES

    fits = pd.DataFrame(
        {"split": [False, True], "alpha_from_bytes": [1024, 1024], "alpha_to_bytes": [2048, 4096],
         "beta_from_bytes": [1024, 2**20], "beta_to_bytes": [2048, 2**22]}
    )  # fmt: skip
    assert size_range(fits, "alpha").tolist() == ["all (intercept)", "1K\u20134K"]
    assert size_range(fits, "beta").tolist() == ["all (slope)", "1M\u20134M"]
    assert INTERVAL_SIZES == 9
    text = fit_section([], TableOut("", pd.DataFrame())).text
    assert "bootstrap" not in text and "none below 9 sizes" in text
