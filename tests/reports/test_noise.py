"""reports/noise.py: the exact one-sided rank test with ties (checked against brute-force
enumeration), its smallest p, the chance of a false alarm per row, and Benjamini-Hochberg."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from distbench.reports.noise import (
    EXACT_MAX,
    bh_adjust,
    normal_p_greater,
    null_distribution,
    null_level,
    rank_test,
    tie_groups,
    two_sided_p,
    u_statistic,
)


def brute_force_p(baseline: list[float], current: list[float]) -> float:
    """P(U >= u) over every way of choosing which pooled values are `current`."""
    pooled = [*current, *baseline]
    observed = u_statistic(current, baseline)
    hits = total = 0
    for chosen in itertools.combinations(range(len(pooled)), len(current)):
        picked = [pooled[i] for i in chosen]
        rest = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        total += 1
        hits += u_statistic(picked, rest) >= observed - 1e-9
    return hits / total


def test_the_issue_example_is_exact_and_not_a_false_alarm() -> None:
    """Baseline [100,100,100,200,200] vs current [200,200,200,200,300]: 15 of the 252
    assignments have a mid-rank sum >= the observed one, p = 0.0595; the normal approximation
    says 0.028 and would call it a regression at alpha 0.05."""
    baseline, current = [100.0, 100, 100, 200, 200], [200.0, 200, 200, 200, 300]
    result = rank_test(baseline, current)
    assert result.exact
    assert result.p_value == pytest.approx(15 / 252)
    assert round(result.p_value, 4) == 0.0595
    assert result.p_value == pytest.approx(brute_force_p(baseline, current))
    normal = normal_p_greater(current, baseline, result.u)
    assert normal == pytest.approx(0.028, abs=0.001) and normal < 0.05 < result.p_value


@pytest.mark.parametrize("seed", range(6))
def test_exact_p_matches_brute_force_with_ties(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(40):
        baseline = [float(rng.choice((1, 2, 3, 4))) for _ in range(rng.randint(1, 6))]
        current = [float(rng.choice((1, 2, 3, 4, 5))) for _ in range(rng.randint(1, 6))]
        result = rank_test(baseline, current)
        assert result.exact
        assert result.p_value == pytest.approx(brute_force_p(baseline, current), abs=1e-12)


def test_no_ties_matches_the_tables() -> None:
    # n1 = n2 = 5 without ties: U = 0..5 occur 1, 1, 2, 3, 5, 7 times among 252 orderings, so
    # P(U >= 25) = 1/252, P(U >= 21) = 12/252, P(U >= 20) = 19/252; 3 vs 3: P(U >= 9) = 1/20.
    base = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert rank_test(base, [6.0, 7.0, 8.0, 9.0, 10.0]).p_value == pytest.approx(1 / 252)
    assert rank_test(base, [2.5, 4.5, 6.0, 7.0, 8.0]).p_value == pytest.approx(12 / 252)
    assert rank_test(base, [2.5, 3.5, 6.0, 7.0, 8.0]).p_value == pytest.approx(19 / 252)
    assert rank_test([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]).p_value == pytest.approx(1 / 20)
    assert rank_test([6.0, 7.0, 8.0], [1.0, 2.0, 3.0]).p_value == 1.0


def test_mid_ranks_of_tie_groups() -> None:
    # ranks 1-3 share 2 (doubled 4), 4-5 share 4.5 (doubled 9), 6 is 6 (doubled 12)
    assert tie_groups([5.0, 1.0, 1.0, 1.0, 3.0, 3.0]) == ((1.0, 3, 4), (3.0, 2, 9), (5.0, 1, 12))
    null = null_distribution((3, 2, 1), 3)
    assert null.total == math.comb(6, 3) and null.tail[-1][1] == null.total


def test_smallest_p_counts_the_ties() -> None:
    assert rank_test([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]).min_p_value == pytest.approx(1 / 20)
    tied = rank_test([100.0, 100, 100, 200, 200], [200.0, 200, 200, 200, 300])
    assert tied.min_p_value == pytest.approx(15 / 252)  # the observed order is the most extreme
    assert rank_test([5.0] * 4, [5.0] * 4).p_value == 1.0  # all equal: never significant


def test_null_level_is_the_false_alarm_chance_of_one_row() -> None:
    assert null_level([1.0, 2.0, 3.0], [4.0, 5.0, 6.0], 0.05) == pytest.approx(1 / 20)
    assert null_level([1.0, 2.0], [3.0, 4.0], 0.05) == 0.0  # 2 vs 2 can never reach 0.05
    five = [float(x) for x in range(5)]
    assert null_level(five, [x + 10 for x in five], 0.05) == pytest.approx(12 / 252)
    big = [float(x) for x in range(EXACT_MAX + 1)]
    assert null_level(big, big, 0.05) == 0.05


def test_above_the_exact_limit_the_normal_approximation() -> None:
    base = [float(x) for x in range(EXACT_MAX + 1)]
    result = rank_test(base, [x + 100 for x in base])
    assert not result.exact and result.p_value < 1e-9


def test_benjamini_hochberg() -> None:
    # sorted p 0.01, 0.03, 0.04, 0.2 (m = 4): p * m / rank = 0.04, 0.06, 0.0533, 0.2, then the
    # step-up minimum from the largest down: 0.04, 0.0533, 0.0533, 0.2.
    q = bh_adjust([0.01, 0.04, 0.03, 0.2])
    assert q == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.2])
    assert bh_adjust([]) == []
    assert bh_adjust([0.9, 0.95]) == pytest.approx([0.95, 0.95])


@pytest.mark.parametrize("sizes", [(3, 3), (5, 9), (25, 25), (12, 40), (60, 60)])
def test_two_sided_p_is_twice_the_smaller_one_sided_rank_test(sizes: tuple[int, int]) -> None:
    """noise.two_sided_p takes both tails from one null distribution (history's change points);
    it must equal the two one-sided rank tests it replaces, ties, exact and normal alike."""
    rng = random.Random(sum(sizes))
    for _ in range(20):
        before = [float(rng.randint(0, 12)) for _ in range(sizes[0])]  # few values: many ties
        after = [float(rng.randint(0, 12)) + rng.choice((0, 3)) for _ in range(sizes[1])]
        slower = rank_test(before, after).p_value
        faster = rank_test(after, before).p_value
        expected = min(1.0, 2.0 * min(slower, faster))
        assert two_sided_p(before, after) == pytest.approx(expected, rel=1e-12, abs=1e-15)
