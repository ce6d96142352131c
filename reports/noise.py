"""Is a slowdown real or noise? A one-sided Mann-Whitney U (Wilcoxon rank-sum) test on the raw
timing samples of two runs, pure Python (no scipy).

Why a rank test: timing samples are few (throughput mode keeps one per trial, 5 by default), skewed
and prone to single outliers (a preempted rank, a page fault). The rank test assumes no
distribution, one outlier moves it by one rank, and for small samples its p-value is exact: with
5 samples per run and no ties, the smallest possible p is 1/252 = 0.004 (complete separation).
A bootstrap interval of the median needs more samples than that to mean anything.

Exact p-values come from the null distribution of U, counted by recursion, when both samples have
at most EXACT_MAX values and there are no ties; otherwise the normal approximation with the tie
correction of the variance and a continuity correction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

EXACT_MAX = 25
"""Largest sample size for which the exact distribution of U is counted."""


@dataclass(frozen=True)
class RankTest:
    """The outcome of `rank_test(baseline, current)`."""

    u: float
    """Pairs (current, baseline) where current is larger; ties count one half."""
    p_value: float
    """P(U >= u) if both samples came from one distribution: small = current is slower."""
    exact: bool
    """Whether p_value is exact (else the normal approximation)."""
    n_baseline: int
    n_current: int

    @property
    def min_p_value(self) -> float:
        """The smallest p-value these sample sizes allow: 1 / C(n + m, n)."""
        return 1.0 / math.comb(self.n_baseline + self.n_current, self.n_current)


def u_statistic(current: Sequence[float], baseline: Sequence[float]) -> float:
    """Mann-Whitney U of `current`: pairs where it is larger, plus half the ties."""
    u = 0.0
    for x in current:
        for y in baseline:
            if x > y:
                u += 1.0
            elif x == y:
                u += 0.5
    return u


@cache
def u_counts(n: int, m: int) -> tuple[int, ...]:
    """How many of the C(n + m, n) orderings of n values against m values (no ties) give each
    U = 0 .. n*m. The largest value is either one of the n (it beats all m: U - m remains for the
    rest) or one of the m (it adds nothing)."""
    if n == 0 or m == 0:
        return (1,)
    with_x = u_counts(n - 1, m)  # U ranges 0..(n-1)m, shifted by m
    with_y = u_counts(n, m - 1)  # U ranges 0..n(m-1)
    counts = [0] * (n * m + 1)
    for u, c in enumerate(with_x):
        counts[u + m] += c
    for u, c in enumerate(with_y):
        counts[u] += c
    return tuple(counts)


def exact_p_greater(u: float, n: int, m: int) -> float:
    """P(U >= u) under the null hypothesis, exactly (no ties)."""
    counts = u_counts(n, m)
    start = math.ceil(u)
    return sum(counts[start:]) / math.comb(n + m, n)


def normal_p_greater(current: Sequence[float], baseline: Sequence[float], u: float) -> float:
    """P(U >= u) by the normal approximation, tie-corrected variance, continuity correction."""
    n, m = len(current), len(baseline)
    total = n + m
    mean = n * m / 2.0
    counts: dict[float, int] = {}
    for value in (*current, *baseline):
        counts[value] = counts.get(value, 0) + 1
    ties = sum(t**3 - t for t in counts.values())
    variance = n * m / 12.0 * ((total + 1) - ties / (total * (total - 1)))
    if variance <= 0:
        return 1.0  # every value equal: nothing distinguishes the two runs
    z = (u - mean - 0.5) / math.sqrt(variance)
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def rank_test(baseline: Sequence[float], current: Sequence[float]) -> RankTest:
    """One-sided test that `current` times tend to be larger than `baseline` times."""
    if not baseline or not current:
        raise ValueError("the rank test needs samples from both runs")
    n, m = len(current), len(baseline)
    u = u_statistic(current, baseline)
    tied = len(set(current) | set(baseline)) < n + m
    if not tied and n <= EXACT_MAX and m <= EXACT_MAX:
        return RankTest(u, exact_p_greater(u, n, m), True, m, n)
    return RankTest(u, min(1.0, normal_p_greater(current, baseline, u)), False, m, n)
