"""distbench.stats, the statistical core: exact numbers for its pure functions (variance parts,
the empirical-Bayes prior, the shift's t test, interval and power, the declared family and
weighted BH, the engine's relative mode). Coverage and rates on recorded launches are the
benchmark's (ci/bench_stats.py), not a timed test's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special
from scipy import stats as sps

from distbench.stats.components import (
    LaunchValue,
    Prior,
    fit_prior,
    pooled_variance,
    trigamma_inverse,
    within_variance,
    within_variances,
)
from distbench.stats.engine import WHOLE_RUN, Settings, SideMatrix, judge_matrices
from distbench.stats.family import bh_adjust, build_family, size_classes, weights
from distbench.stats.shift import judge_shift
from distbench.stats.verdict import (
    BLIND,
    CANNOT_TELL,
    IMPROVED,
    NO_CHANGE,
    REGRESSED,
    decide_state,
    describe_state,
)


def values(ys: list[float], night: str = "n", per_night: int = 2) -> list[LaunchValue]:
    return [
        LaunchValue(y, math.nan, f"{night}{i}", f"{night}{i // per_night}")
        for i, y in enumerate(ys)
    ]


def test_pooled_variance_is_each_sides_spread_around_its_own_mean() -> None:
    variance, df = pooled_variance([[1.0, 2.0, 3.0], [10.0, 12.0]])
    assert df == 3 and variance == pytest.approx((2.0 + 2.0) / 3)
    assert pooled_variance([[1.0], [2.0]]) == (pytest.approx(math.nan, nan_ok=True), 0)


def test_within_variance_is_the_bootstrap_variance_of_the_log_statistic() -> None:
    rng = np.random.default_rng(0)
    trials = np.exp(rng.normal(0.0, 0.1, size=12))
    found = within_variance(trials, np.mean, seed=1)
    own = float(np.var(np.log(trials)))  # the plug-in variance the bootstrap resamples
    assert found == pytest.approx(own / 12, rel=0.25)
    assert within_variance([5.0] * 8, np.median) == pytest.approx(0.0, abs=1e-20)
    assert math.isnan(within_variance([5.0], np.min))
    batched = within_variances([trials, trials[:5], [1.0]], np.mean, seed=1)
    assert batched[0] == pytest.approx(own / 12, rel=0.25) and math.isnan(batched[2])


def test_trigamma_inverse_inverts() -> None:
    for x in (0.01, 0.3, 2.0, 50.0):
        assert float(special.polygamma(1, trigamma_inverse(x))) == pytest.approx(x, rel=1e-6)


def test_fit_prior_recovers_a_scaled_inverse_chi_square() -> None:
    rng = np.random.default_rng(3)
    s0, d0, d = 0.01, 8.0, 5
    true = s0 * d0 / rng.chisquare(d0, size=4000)  # each row's own variance
    observed = true * rng.chisquare(d, size=4000) / d  # its sample variance on d df
    prior = fit_prior(observed.tolist(), [d] * 4000, "test")
    assert prior is not None
    assert prior.variance == pytest.approx(s0, rel=0.1) and prior.df == pytest.approx(d0, rel=0.3)
    assert fit_prior([0.1, 0.2], [3, 3], "too few") is None


def test_the_prior_squeezes_by_degrees_of_freedom() -> None:
    prior = Prior(0.04, 4.0, "p")
    assert prior.squeeze(0.01, 12) == (pytest.approx((4 * 0.04 + 12 * 0.01) / 16), 16.0)
    assert prior.squeeze(math.nan, 0) == (0.04, 4.0)


def test_shift_is_the_two_sample_t_test_on_launch_values() -> None:
    """Each launch a night of its own and no launch part: the two-sample t test."""
    base, cur = [0.0, 0.1, -0.1, 0.05], [0.3, 0.2]
    shift = judge_shift(values(base, per_night=1), values(cur, "c", 1), Prior(1e-12, 1e9, "none"))
    reference = sps.ttest_ind(cur, base, alternative="greater")
    assert shift.df == pytest.approx(4) and shift.t == pytest.approx(reference.statistic)
    assert shift.p_slower() == pytest.approx(reference.pvalue)
    assert shift.p_faster() == pytest.approx(1 - reference.pvalue)
    low, high = shift.interval()
    half = sps.t.ppf(0.975, 4) * shift.se
    assert (math.log(low), math.log(high)) == pytest.approx(
        (shift.effect - half, shift.effect + half)
    )


def test_nights_are_the_unit_of_what_moves_a_whole_night() -> None:
    """Two launches a night that agree inside each night but not between nights: the night
    part carries the spread, with the nights' degrees of freedom; a drift floor raises it."""
    base = values([0.0, 0.01, 0.2, 0.21, -0.2, -0.19])  # 3 nights, tight inside each
    cur = values([0.0, 0.01], "c")
    shift = judge_shift(base, cur, Prior(1e-4, 1e9, "known"))
    assert shift.nights_base == 3 and shift.nights_current == 1
    assert shift.night == pytest.approx(0.04 - 1e-4 / 2, rel=0.05)  # night means 0.005 +- 0.2
    assert shift.df == pytest.approx(2.0, rel=0.05)
    floored = judge_shift(values([0.0, 0.01] * 3), cur, Prior(1e-4, 1e9, "known"), drift=0.1)
    assert floored.night == pytest.approx(0.01) and floored.df > 1e6


def test_the_within_launch_part_is_a_floor_of_the_variance() -> None:
    base = [LaunchValue(0.0, 0.09, "a", "n"), LaunchValue(0.001, 0.09, "b", "n")]
    cur = [LaunchValue(0.0, 0.09, "c", "m")]
    shift = judge_shift(base, cur, Prior(1e-6, 0.0, "none"))
    assert shift.variance == pytest.approx(0.09) and shift.between == 0.0


KEYS = [
    {"kind": "comm", "primitive": p, "size_bytes": str(s), "world_size": w, "dtype": "float32"}
    for p in ("all_reduce", "broadcast")
    for s in (1024, 65536)
    for w in ("2", "3")
]


def test_the_family_is_every_row_then_every_distinct_band() -> None:
    family = build_family(KEYS)
    rows = [h for h in family if h.is_row]
    bands = [h for h in family if not h.is_row]
    assert len(rows) == 8
    reduce = [dict(h.band) for h in bands if h.primitive == "comm:all_reduce"]
    assert reduce == [{}, {"world_size": "2"}, {"world_size": "3"}, {"size_from": "65536"}]
    assert [h.members for h in bands if h.primitive == "comm:all_reduce"][3] == (2, 3)
    assert build_family(KEYS) == family  # declared, not learnt


def test_bh_and_weighted_bh() -> None:
    assert bh_adjust([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.5])
    family = build_family(KEYS)
    w = weights(family, 0.5)
    assert sum(w) == pytest.approx(len(family))
    broad = [wi for wi, h in zip(w, family, strict=True) if not h.band]
    assert broad == [pytest.approx(0.5 * len(family) / 2)] * 2
    assert bh_adjust([0.001, 0.5], [2.0, 0.0 + 1e-9])[0] == pytest.approx(0.001)


def matrix(y: np.ndarray, name: str) -> SideMatrix:
    launches = [f"{name}{i}" for i in range(len(y))]
    return SideMatrix(
        launches, [f"{name}-night{i // 2}" for i in range(len(y))], y, np.full_like(y, np.nan)
    )


FOUR = [
    {"kind": "comm", "primitive": p, "size_bytes": str(s), "world_size": w, "dtype": "float32"}
    for p in ("all_reduce", "broadcast", "reduce", "all_gather")
    for s in (1024, 65536)
    for w in ("2", "3")
]


def test_relative_mode_takes_a_shift_of_the_whole_run_out_of_every_primitive() -> None:
    rng = np.random.default_rng(11)
    base = rng.normal(0.0, 0.02, size=(12, len(FOUR)))
    cur = rng.normal(0.0, 0.02, size=(2, len(FOUR))) + 0.4  # the whole box 49 % slower tonight
    prior = Prior(0.02**2, 4.0, "test")
    outcome = judge_matrices(FOUR, matrix(base, "b"), matrix(cur, "c"), [0.05] * len(FOUR),
                             [prior] * len(FOUR), Settings(min_nights=5), prior)  # fmt: skip
    assert outcome.relative and outcome.learning == ""
    assert all(j.state == NO_CHANGE for j in outcome.rows)
    (whole,) = [j for j in outcome.bands if j.hypothesis.primitive == WHOLE_RUN]
    assert whole.shift is not None and whole.shift.effect == pytest.approx(0.4, abs=0.03)
    assert whole.state == REGRESSED
    cur[:, :4] += 0.25  # all_reduce 28 % slower beyond the rest
    outcome = judge_matrices(FOUR, matrix(base, "b"), matrix(cur, "c"), [0.05] * len(FOUR),
                             [prior] * len(FOUR), Settings(min_nights=5), prior)  # fmt: skip
    hits = {j.hypothesis.primitive for j in (*outcome.rows, *outcome.bands) if j.state == REGRESSED}
    assert hits == {"comm:all_reduce", WHOLE_RUN}  # the others are not "improved"
    improved = {
        j.hypothesis.primitive for j in (*outcome.rows, *outcome.bands) if j.state == IMPROVED
    }
    assert not improved


def test_with_fewer_than_four_primitives_every_hypothesis_is_absolute() -> None:
    rng = np.random.default_rng(12)
    base = rng.normal(0.0, 0.02, size=(12, len(KEYS)))
    cur = rng.normal(0.0, 0.02, size=(2, len(KEYS)))
    cur[:, :4] += 0.25  # all_reduce slower; broadcast must not read improved
    prior = Prior(0.02**2, 4.0, "test")
    outcome = judge_matrices(KEYS, matrix(base, "b"), matrix(cur, "c"), [0.05] * len(KEYS),
                             [prior] * len(KEYS), Settings(min_nights=5), prior)  # fmt: skip
    assert not outcome.relative
    states = {(j.hypothesis.primitive, j.state) for j in outcome.rows}
    assert states == {("comm:all_reduce", REGRESSED), ("comm:broadcast", NO_CHANGE)}


def test_decide_state() -> None:
    shift = judge_shift(values([0.0, 0.01, -0.01]), values([0.3], "c"), Prior(1e-4, 10, "p"))
    assert decide_state(shift, 0.01, 1.0, 0.05, 0.05, "", 0.2) == (REGRESSED, "")
    assert decide_state(shift, 0.01, 1.0, 0.05, 0.5, "", 0.2) == (NO_CHANGE, "")  # under the floor
    assert decide_state(shift, 0.2, 1.0, 0.05, 0.05, "learning the noise: 2 of 5 nights", 0.2) == (
        CANNOT_TELL, "learning the noise: 2 of 5 nights",
    )  # fmt: skip
    faster = judge_shift(values([0.3, 0.31, 0.29]), values([0.0], "c"), Prior(1e-4, 10, "p"))
    assert decide_state(faster, 1.0, 0.001, 0.05, 0.05, "", 0.2)[0] == IMPROVED
    assert decide_state(None, 1.0, 1.0, 0.05, 0.05, "", 0.2) == (
        CANNOT_TELL,
        "no launch on one side",
    )
    # the level is alpha itself, at its edge: q = alpha passes, just above it does not (a rule
    # at 2 alpha, or one that reads p for q, must fail here)
    assert decide_state(shift, 0.05, 1.0, 0.05, 0.05, "", 0.2)[0] == REGRESSED
    assert decide_state(shift, 0.0501, 1.0, 0.05, 0.05, "", 0.2)[0] == NO_CHANGE
    assert decide_state(faster, 1.0, 0.0501, 0.05, 0.05, "", 0.2)[0] == NO_CHANGE
    assert (
        decide_state(shift, 1.0, 0.001, 0.05, 0.05, "", 0.2)[0] == NO_CHANGE
    )  # slower, q of faster
    # a hypothesis that could see nothing below 10x is not vouched for: cannot tell, as
    # history says (a window of two nights: one degree of freedom)
    assert decide_state(shift, 0.2, 1.0, 0.05, 0.05, "", math.inf) == (CANNOT_TELL, BLIND)
    assert decide_state(shift, 0.2, 1.0, 0.05, 0.05, "", 9.5)[0] == CANNOT_TELL
    assert decide_state(shift, 0.2, 1.0, 0.05, 0.05, "", 9.0)[0] == NO_CHANGE


def test_describe_state() -> None:
    from distbench.stats.family import Hypothesis
    from distbench.stats.verdict import Judged

    hypothesis = Hypothesis("comm:all_reduce", (0,), ())
    seen = Judged(hypothesis, None, 1.0, 1.0, 1.0, 1.0, NO_CHANGE, 0.183, 0.05)
    assert describe_state(seen) == "no change seen (would catch >= 18 %)"
    blind = Judged(hypothesis, None, 1.0, 1.0, 1.0, 1.0, NO_CHANGE, math.inf, 0.05)
    assert describe_state(blind) == "no change seen (would catch nothing below 10x)"
    learning = Judged(
        hypothesis,
        None,
        1.0,
        1.0,
        1.0,
        1.0,
        CANNOT_TELL,
        2.0,
        0.05,
        "learning the noise: 2 of 5 nights",
    )
    assert describe_state(learning) == "cannot tell: learning the noise: 2 of 5 nights"


def test_bands_cut_at_the_sizes_asked_not_their_roundings() -> None:
    """all_gather at 3 ranks measures 1K and 64K as 1,008 and 65,520 bytes (whole elements per
    rank): one band 'sizes >= 64K' holds both world sizes' 64K rows; the nightly once declared
    'sizes >= 1K', '>= 65520' and '>= 64K' beside every row, near-copies BH paid for."""
    keys = [
        {"kind": "comm", "primitive": "all_gather", "size_bytes": str(s), "world_size": w}
        for w, sizes in (("2", (1024, 65536, 1048576)), ("3", (1008, 65520, 1048560)))
        for s in sizes
    ]
    bands = [h for h in build_family(keys) if not h.is_row]
    cuts = {
        dict(h.band).get("size_from"): h.members for h in bands if "world_size" not in dict(h.band)
    }
    assert cuts == {None: (0, 1, 2, 3, 4, 5), "65536": (1, 2, 4, 5), "1048576": (2, 5)}
    assert len(bands) == 3 + 2 * 2  # the cuts, and each world size's own two bands
    near = size_classes({1000, 1040, 1080, 1120})
    assert near == {1120: 1120, 1080: 1120, 1040: 1040, 1000: 1040}  # no chain into one class
