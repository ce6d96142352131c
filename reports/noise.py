"""Is a slowdown real or noise? A one-sided Mann-Whitney (Wilcoxon rank-sum) test on the
independent timing samples of two runs, exact with ties, counted with numpy (no scipy).

Why a rank test: timing samples are few (throughput mode keeps one per trial), skewed and prone to
single outliers (a preempted rank, a page fault). The rank test assumes no distribution, and one
outlier moves it by one rank. Why exact: coarse timers (CUDA events, integer microseconds) make
ties, and the normal approximation is wrong on few samples. Baseline [100,100,100,200,200] against
current [200,200,200,200,300] has an exact one-sided p of 15/252 = 0.0595; the normal approximation
says 0.028, a false alarm at alpha = 0.05.

The exact p-value is the permutation distribution of the mid-rank sum of the current samples,
given the tie groups of the pooled samples: every way of choosing which n of the N pooled values
are "current" is equally likely under the null hypothesis. Within a tie group of size t all values
share one mid-rank, so only how many of them are current matters (C(t, c) ways), and the
distribution is a small dynamic program over the tie groups: (values chosen, rank sum) -> ways.
Ranks are doubled so that mid-ranks stay integers and the counts stay exact. Above EXACT_MAX
samples per side: the normal approximation with the tie-corrected variance.

Many rows tested at once give false alarms by chance: `null_level` is the probability that one
row reaches p <= alpha when nothing changed (at most alpha, less for discrete tests), their sum
over rows the false alarms chance alone gives, and `bh_adjust` the Benjamini-Hochberg q-values
that control the false discovery rate across the rows of one comparison.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

EXACT_MAX = 25
"""Largest sample size per side for which the exact distribution is counted."""


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
    min_p_value: float
    """The smallest p-value these sample sizes and ties allow: below alpha or the test can never
    call a change real (3 vs 3 samples without ties: 1/20 = 0.05)."""


@dataclass(frozen=True)
class NullDistribution:
    """The exact permutation distribution of the doubled mid-rank sum of n values among N."""

    total: int
    """C(N, n): the number of equally likely assignments."""
    tail: tuple[tuple[int, int], ...]
    """(doubled rank sum w, assignments with a doubled sum >= w), w descending."""

    def p_at_least(self, w2: int) -> float:
        """P(2W >= w2)."""
        ways = 0
        for value, at_least in self.tail:
            if value < w2:
                break
            ways = at_least
        return ways / self.total

    def p_at_most(self, w2: int) -> float:
        """P(2W <= w2) = 1 - P(2W > w2)."""
        greater = 0
        for value, at_least in self.tail:
            if value <= w2:
                break
            greater = at_least
        return (self.total - greater) / self.total

    def level(self, alpha: float) -> float:
        """P(p <= alpha): how often the test fires when nothing changed (<= alpha)."""
        best = 0
        for _value, at_least in self.tail:
            if at_least > alpha * self.total:
                break
            best = at_least
        return best / self.total


def tie_groups(values: Sequence[float]) -> tuple[tuple[float, int, int], ...]:
    """(value, group size, doubled mid-rank) for the distinct values, ascending."""
    ordered = sorted(values)
    groups = []
    start = 0
    while start < len(ordered):
        end = start
        while end < len(ordered) and ordered[end] == ordered[start]:
            end += 1
        # ranks start + 1 .. end: doubled mid-rank = start + 1 + end
        groups.append((ordered[start], end - start, start + 1 + end))
        start = end
    return tuple(groups)


@lru_cache(maxsize=4096)
def null_distribution(group_sizes: tuple[int, ...], n: int) -> NullDistribution:
    """The exact distribution of the doubled mid-rank sum of n values chosen among tie groups of
    these sizes (ascending values). ways[k, w] counts the choices of k values so far whose
    doubled rank sum is w; a group of size t with doubled mid-rank r adds c of its values in
    C(t, c) ways, each adding c * r (one array operation per c: the rows shift together).

    Every count is at most C(N, n), exact in int64 up to EXACT_MAX per side (C(50, 25) ~ 1.3e14);
    beyond 2**62 the arrays hold Python integers."""
    total = math.comb(sum(group_sizes), n)
    top = 2 * sum(range(sum(group_sizes) - n + 1, sum(group_sizes) + 1))  # the largest sum
    ways = np.zeros((n + 1, top + 1), dtype=np.int64 if total < 2**62 else object)
    ways[0, 0] = 1
    seen = 0
    for size in group_sizes:
        rank2 = 2 * seen + size + 1
        seen += size
        before = ways.copy()  # each group adds to the choices made before it, once
        for c in range(1, min(size, n) + 1):
            shift = c * rank2
            if shift > top:
                break
            ways[c:, shift:] += math.comb(size, c) * before[:-c, : top + 1 - shift]
    sums = np.flatnonzero(ways[n])[::-1]  # descending
    at_least = np.cumsum(ways[n][sums])
    return NullDistribution(total, tuple(zip(sums.tolist(), at_least.tolist(), strict=True)))


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


def _exact(current: Sequence[float], baseline: Sequence[float]) -> tuple[int, NullDistribution]:
    """The observed doubled mid-rank sum of `current` and its null distribution."""
    groups = tie_groups([*current, *baseline])
    rank2 = {value: r2 for value, _size, r2 in groups}
    observed = sum(rank2[x] for x in current)
    return observed, null_distribution(tuple(size for _v, size, _r in groups), len(current))


def normal_p_greater(current: Sequence[float], baseline: Sequence[float], u: float) -> float:
    """P(U >= u) by the normal approximation, tie-corrected variance, continuity correction."""
    n, m = len(current), len(baseline)
    total = n + m
    mean = n * m / 2.0
    ties = sum(size**3 - size for _v, size, _r in tie_groups([*current, *baseline]))
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
    if n <= EXACT_MAX and m <= EXACT_MAX:
        observed, null = _exact(current, baseline)
        p_value = null.p_at_least(observed)
        return RankTest(u, p_value, True, m, n, null.p_at_least(null.tail[0][0]))
    p_value = min(1.0, normal_p_greater(current, baseline, u))
    return RankTest(u, p_value, False, m, n, 1.0 / math.comb(n + m, n))


def two_sided_p(baseline: Sequence[float], current: Sequence[float]) -> float:
    """2 x the smaller one-sided p-value: rank_test in both directions from one null
    distribution (the rank sums of the two sides add up to a constant, so current's lower tail
    is baseline's upper tail)."""
    if not baseline or not current:
        raise ValueError("the rank test needs samples from both runs")
    n, m = len(current), len(baseline)
    if n <= EXACT_MAX and m <= EXACT_MAX:
        observed, null = _exact(current, baseline)
        slower, faster = null.p_at_least(observed), null.p_at_most(observed)
    else:
        u = u_statistic(current, baseline)
        slower = normal_p_greater(current, baseline, u)
        faster = normal_p_greater(baseline, current, n * m - u)
    return min(1.0, 2.0 * min(slower, faster))


def null_level(baseline: Sequence[float], current: Sequence[float], alpha: float) -> float:
    """P(p <= alpha) for these sample sizes and ties when nothing changed: the expected number
    of false alarms this row contributes (alpha itself above EXACT_MAX samples)."""
    if len(baseline) > EXACT_MAX or len(current) > EXACT_MAX:
        return alpha
    return _exact(current, baseline)[1].level(alpha)


def bh_adjust(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg q-values, in the order given: a row whose q <= alpha is a discovery
    with the false discovery rate of the whole family kept at alpha (and, when nothing changed
    at all, the chance of any false alarm kept at alpha)."""
    count = len(p_values)
    order = sorted(range(count), key=lambda i: p_values[i])
    q = [1.0] * count
    smallest = 1.0
    for position in range(count - 1, -1, -1):  # step up: from the largest p down
        i = order[position]
        smallest = min(smallest, p_values[i] * count / (position + 1))
        q[i] = min(1.0, smallest)
    return q
