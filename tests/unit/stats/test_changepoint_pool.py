"""One phi for a history's series (distbench.stats.changepoint_pool) and the null of a pooled phi
(changepoint_null's known cells): series that agree are pooled, series that differ or share one
drift are not, a pooled null history's p-values are not too small, and pooling finds steps
that series judged alone miss. The null check is shown to bite: read in the null of a weaker
drift (the test shifts the cell), the same pooled statistics are too often small."""

from __future__ import annotations

import math

import numpy as np
import pytest

from distbench.stats import changepoint_model as model
from distbench.stats import changepoint_null as null
from distbench.stats.changepoint import detect_changes
from distbench.stats.changepoint_model import calibration, estimator_variance
from distbench.stats.changepoint_pool import POOL_MIN, effective_count, pooled_noise

NIGHT_SD = 0.10 / math.sqrt(2)  # ci/bench_stats_history.py: two launches of this box a night
STEP = math.log(1.2)
CASES = 108


def ar1(rng: np.random.Generator, phi: np.ndarray, n: int = 60) -> np.ndarray:
    """One AR(1) series of marginal sd NIGHT_SD per phi given."""
    e = rng.standard_normal((len(phi), n)) * np.sqrt(1 - phi * phi)[:, None]
    x = np.empty((len(phi), n))
    x[:, 0] = rng.standard_normal(len(phi))
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x * NIGHT_SD


def pooled(y: np.ndarray) -> np.ndarray:
    """Each series' noise.pooled after pooled_noise, fitted as history fits them."""
    scores, white, _scale = model.normal_scores(y, np.zeros(len(y)))
    return pooled_noise(scores, white, model.estimate_noise(scores, white)).pooled


def test_estimation_alone_spreads_phi_as_measured() -> None:
    """The simulated sd of a fitted phi at 60 nights and phi 0.5 is the 0.13 that
    ci/bench_stats_history.py measures on series drawn apart from it."""
    assert 0.11 < math.sqrt(estimator_variance(0.5, 0.0, 60)) < 0.15
    assert estimator_variance(0.5, 0.0, 200) < estimator_variance(0.5, 0.0, 60) / 2


def test_series_that_agree_are_pooled_at_their_median_phi() -> None:
    """(A history of 108 such series is pooled 9 times in 10: ci/bench_stats_history.py.)"""
    y = ar1(np.random.default_rng(1), np.full(CASES, 0.5))
    scores, white, _scale = model.normal_scores(y, np.zeros(CASES))
    own = model.estimate_noise(scores, white)
    noise = pooled_noise(scores, white, own)
    assert noise.pooled.all()
    assert np.allclose(noise.phi, np.median(own.phi))
    assert not own.pooled.any()


@pytest.mark.parametrize(
    "case",
    ["phi 0.2 and 0.8", "one drift shared", f"{POOL_MIN - 1} series", "phi 0.1-0.9"],
)
def test_series_that_differ_or_share_one_drift_keep_their_own_phi(case: str) -> None:
    rng = np.random.default_rng(2)
    if case == "phi 0.2 and 0.8":
        y = ar1(rng, np.where(np.arange(108) % 2 == 0, 0.2, 0.8))
    elif case == "phi 0.1-0.9":
        y = ar1(rng, rng.uniform(0.1, 0.9, 108))
    elif case == "one drift shared":  # 70 % of each series' variance: one drift seen 40 times
        y = math.sqrt(0.3) * ar1(rng, np.full(40, 0.5)) + math.sqrt(0.7) * ar1(rng, np.full(1, 0.5))
    else:
        y = ar1(rng, np.full(POOL_MIN - 1, 0.5))
    assert not pooled(y).any()


def test_the_fit_of_phi_is_biased_low_and_its_calibration_says_by_how_much() -> None:
    """calibration: the median fitted phi at 60 nights rises with phi, below it (0.45 at 0.5,
    as ci/bench_stats_history.py's fitted_phi measures), and its spread is estimation's."""
    true, medians, spreads = calibration(60, False)
    assert np.all(np.diff(medians) > 0)
    assert 0.40 < float(np.interp(0.5, true, medians)) < 0.49
    assert float(np.interp(0.9, true, medians)) < 0.86
    assert 0.10 < float(np.interp(0.5, true, spreads)) < 0.16


def test_the_effective_count_is_the_series_count_when_independent_and_one_when_shared() -> None:
    rng = np.random.default_rng(3)
    independent = ar1(rng, np.full(50, 0.5))
    split = np.full(50, 30)
    assert effective_count(independent, split) > 35
    same = np.repeat(ar1(rng, np.full(1, 0.5)), 50, axis=0) + 1e-3 * independent
    assert effective_count(same, split) < 1.5


def null_history_p_values(histories: int, seed: int, phi: tuple[float, float]) -> np.ndarray:
    """The whole-series p-values of the pooled series of null histories of CASES series, each
    series' phi drawn uniform over `phi`."""
    rng = np.random.default_rng(seed)
    y = ar1(rng, rng.uniform(*phi, histories * CASES))
    families = [i // CASES for i in range(len(y))]
    judged = detect_changes(list(y), [0.0] * len(y), families=families)
    flags = np.array([bool(j.noise.pooled[0]) for j in judged])
    assert flags.mean() > 0.6
    return np.array([j.p_value for j in judged])[flags]


@pytest.mark.parametrize("phi", [(0.5, 0.5), (0.4, 0.6)])
def test_a_pooled_null_history_is_not_overconfident_and_breaking_its_null_shows(
    phi: tuple[float, float],
) -> None:
    """Under no change, P(p <= 0.05) of pooled series is at most 0.05 (within 3 binomial sd of
    ~2,000 series), with one phi and with phi spread as far as the pooling lets through; read in
    the null of a drift weaker by 0.15 (the test shifts the cell), the same statistics are far
    too often small: the check sees a null that does not belong to the data."""
    p = null_history_p_values(20, 4, phi)
    bound = 0.05 + 3 * math.sqrt(0.05 * 0.95 / len(p))
    assert float(np.mean(p <= 0.05)) <= bound

    keep = null.NullPool.p_values

    def weaker(self, t, phi, white, window, known=False):  # type: ignore[no-untyped-def]
        return keep(self, t, np.maximum(np.asarray(phi) - 0.15, 0.0), white, window, known)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(null.NullPool, "p_values", weaker)
        broken = null_history_p_values(20, 4, phi)
    assert float(np.mean(broken <= 0.05)) > bound


def test_pooling_finds_steps_in_a_tenth_of_a_history_that_series_alone_miss() -> None:
    """A history of 108 series, 10 of them 20 % slower from night 40: pooled, most are found
    (93 % in ci/bench_stats_history.py); each with its own phi, most are missed (28 %)."""
    rng = np.random.default_rng(5)
    y = ar1(rng, np.full(CASES, 0.5))
    y[:10] += STEP * (np.arange(60) >= 40)
    found = {}
    for pool in (True, False):
        judged = detect_changes(list(y), [0.0] * CASES, 0.05, 0.05, pool_phi=pool)
        hits = [any(abs(f.index - 40) <= 5 and f.effect > 0 for f in j.found) for j in judged]
        found[pool] = (sum(hits[:10]), sum(hits[10:]))
    assert found[True][0] >= 8 and found[True][1] == 0
    assert found[False][0] <= found[True][0] - 3


def test_the_known_null_is_narrower_than_the_estimated_one() -> None:
    """A pooled phi carries little error, so its cell's critical value is below that of a phi
    one series estimated (at the phi of a history at 0.5 and of series at 0.3 and 0.6)."""
    pool = null.pool_for(60, False)
    for phi in (0.3, 0.45, 0.6):
        assert pool.critical(0.05, phi, 0.0, 60, known=True) < pool.critical(0.05, phi, 0.0, 60)


def test_history_says_which_series_shared_their_drift() -> None:
    """history's drift line: a history of 108 series that agree shares one phi; 5 series are
    too few and are judged each at its own."""
    from distbench.reports.history.lines import drift_line

    many = detect_changes(list(ar1(np.random.default_rng(1), np.full(CASES, 0.5))), [0.0] * CASES)
    few = detect_changes(list(ar1(np.random.default_rng(6), np.full(5, 0.5))), [0.0] * 5)
    assert drift_line(many).startswith("drift: 108 series share their history's AR(1) phi (0.")
    assert drift_line(few).startswith("drift: 5 judged each at its own phi (median 0.")
    assert drift_line([]) == ""
