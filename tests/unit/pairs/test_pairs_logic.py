"""Pure parts of `distbench pairs` and `--env`: the circle method, each unit's own value from the
decomposition of the pair matrix (its best pair) and who is flagged, the option parsers, every
new option's bad input (one line, exit 2), and `pairs --dry-run` (the plan, nothing started)."""

from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest

from distbench.options.envsweep import env_combinations
from distbench.pairs.outliers import log_variance, standings
from distbench.pairs.spec import circle_rounds
from distbench.stats.decompose import Pair, slowest_end
from tests.conftest import usage_error_line


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 8, 128])
def test_circle_method_meets_every_pair_once_in_disjoint_rounds(n: int) -> None:
    rounds = circle_rounds(n)
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)  # odd n: a dummy rank, n rounds
    met = [pair for pairs in rounds for pair in pairs]
    assert sorted(met) == [(a, b) for a in range(n) for b in range(a + 1, n)]
    for pairs in rounds:
        busy = [rank for pair in pairs for rank in pair]
        assert len(busy) == len(set(busy)) == n - n % 2  # odd n: exactly one rank idles


PAIRS_4 = [(a, b) for a in range(4) for b in range(a + 1, 4)]


def slower_end_matrix(n: int, slow: set[int], factor: float, noise: float = 0.0, seed: int = 0):
    """Pair busbw of n units where a pair runs at its slower end's speed (each sample is the
    slower rank's): 10 GB/s, or 10 / factor with a slow unit in it; times log-normal noise."""
    rng = random.Random(seed)
    return [
        (a, b, 10.0 / (factor if slow & {a, b} else 1.0) * math.exp(rng.gauss(0, noise)), math.nan)
        for a in range(n)
        for b in range(a + 1, n)
    ]


def test_each_unit_is_as_fast_as_its_best_pair() -> None:
    own = slowest_end([Pair(0, 1, 2.0, 0.1), Pair(0, 2, 1.0, 0.2), Pair(1, 2, 3.0)])
    assert [(o.unit, o.y, o.partner, o.variance, o.pairs) for o in own.values()] == [
        (0, 1.0, 2, 0.2, 2),
        (1, 2.0, 0, 0.1, 2),
        (2, 1.0, 0, 0.2, 2),
    ]
    two = slowest_end([Pair(0, 1, 2.0), Pair(0, 1, math.nan)])  # one pair: no end can be told
    assert (two[0].y, two[1].y, two[0].pairs) == (2.0, 2.0, 1)


def test_one_noisy_pair_of_four_flags_nobody() -> None:
    """The case the additive least-squares decomposition cannot take at 4 units: pair 0-1 2.5x
    slow by a preemption gives the same effects (-+ log 2.5 / 4) as ranks 0 and 1 slow with a
    fast pair 2-3, so a rule that names half of 4 ranks slow names both ends of a noisy pair."""
    pairs = [(a, b, 10.0 / (2.5 if (a, b) == (0, 1) else 1.0), math.nan) for a, b in PAIRS_4]
    assert not any(s.outlier for s in standings(pairs, 3.5))
    design = np.array([[1.0, *(float(u in (a, b)) for u in range(4))] for a, b in PAIRS_4])
    effects = np.linalg.lstsq(design, [-math.log(bw) for *_, bw, _ in pairs], rcond=None)[0][1:]
    assert effects[0] - effects[2] == pytest.approx(math.log(2.5) / 2)  # what LS would flag


@pytest.mark.parametrize(("n", "slow"), [(4, {1, 3}), (8, {0, 2, 5, 7}), (4, {2}), (6, {4, 5})])
def test_slow_units_are_flagged_up_to_half_of_them(n: int, slow: set[int]) -> None:
    pairs = slower_end_matrix(n, slow, factor=3.0, noise=0.03, seed=n)
    found = standings(pairs, threshold=3.5)
    assert {s.unit for s in found if s.outlier} == slow
    assert all(s.pairs == n - 1 for s in found)
    healthy = min(s.busbw_GBps for s in found if s.unit not in slow)
    assert max(s.busbw_GBps for s in found if s.unit in slow) < healthy
    # 0.2.0's rule, each unit's median busbw over its pairs: with half of the units slow every
    # median is slow, and nobody differs (the failure this replaces).
    if 2 * len(slow) == n:
        medians = [statistics.median(bw for a, b, bw, _ in pairs if u in (a, b)) for u in range(n)]
        assert max(medians) < 10.0 / 2


def test_noise_alone_flags_nobody_and_agreeing_units_sit_on_the_floor() -> None:
    for seed in range(20):
        assert not any(
            s.outlier for s in standings(slower_end_matrix(8, set(), 1.0, 0.05, seed), 3.5)
        )
    # units that agree but one 5 % slower, measured precisely: the floor (0.1 in log terms)
    # keeps its z near -0.5, not an outlier
    pairs = [
        (a, b, 10.0 * (0.95 if 3 in (a, b) else 1.0), 1e-6) for a in range(4) for b in range(a)
    ]
    found = {s.unit: s for s in standings(pairs, 3.5)}
    assert found[3].robust_z == pytest.approx(math.log(0.95) / 0.1, rel=0.01)
    assert not found[3].outlier


def test_more_than_half_slow_is_the_stated_limit() -> None:
    """docs/pairs.md: at n - 1 slow units every pair holds one; nobody can be told apart."""
    found = standings(slower_end_matrix(4, {0, 1, 2}, factor=3.0), 3.5)
    assert not any(s.outlier for s in found)


def test_a_pairs_trials_give_the_variance_of_its_log_p50() -> None:
    # 4 trials of 3 samples, medians 100, 110, 90, 100: (pi / 2) var(log medians) / 4
    samples = [99, 100, 150, 110, 108, 111, 90, 70, 91, 100, 100, 100]
    logs = [math.log(m) for m in (100, 110, 90, 100)]
    expected = math.pi / 2 * statistics.variance(logs) / 4
    assert log_variance([float(v) for v in samples], 4) == pytest.approx(expected)
    assert math.isnan(log_variance([100.0, 101.0], 1))  # one trial: no spread to see
    assert math.isnan(log_variance([100.0, 101.0, 102.0], 2))  # not equal trials


def test_standings_flag_the_slow_rank_only() -> None:
    slow = 2
    pairs = [
        (a, b, 1.0 if slow in (a, b) else 10.0, math.nan) for a in range(4) for b in range(a + 1, 4)
    ]
    found = standings(pairs, threshold=3.5)
    assert [s.unit for s in found if s.outlier] == [slow]
    assert [s.pairs for s in found] == [3, 3, 3, 3]
    assert found[slow].busbw_GBps == pytest.approx(1.0)  # its best pair's


def test_env_combinations_first_axis_slowest() -> None:
    assert env_combinations(()) == [()]
    assert env_combinations(("A=1,2", "B=x,y")) == [
        ("A=1", "B=x"),
        ("A=1", "B=y"),
        ("A=2", "B=x"),
        ("A=2", "B=y"),
    ]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["pairs", "--primitive", "broadcast"], "--primitive 'broadcast' is not one pairs"),
        (["pairs", "--level", "rack"], "--level"),
        (["pairs", "--outlier-threshold", "-1"], "--outlier-threshold '-1' is not a positive"),
        (["pairs", "--outlier-threshold", "abc"], "--outlier-threshold 'abc'"),
        (["pairs", "--outlier-threshold", "nan"], "--outlier-threshold 'nan'"),
        (["pairs", "--fail-on-outlier=3"], "--fail-on-outlier"),
        (["pairs", "--window", "0"], "--window"),
        (["pairs", "--sizes", "1X"], "'1X' has an unknown unit"),
        (["pairs", "--backend", "gloo", "--level", "node"], "--level node needs two or more"),
        (["pairs", "--backend", "gloo", "--world-sizes", "1"], "at least 2 ranks"),
        (["pairs", "--backend", "gloo", "--world-sizes", "2,4"], "one --world-sizes value"),
        (
            ["pairs", "--backend", "gloo", "--primitive", "allreduce", "--window", "4"],
            "--window applies to --primitive sendrecv",
        ),
        (["allreduce", "--env", "NCCL_ALGO"], "is not NAME=VALUE"),
        (["allreduce", "--env", "1X=a"], "is not NAME=VALUE"),
        (["allreduce", "--env", "A=1,,2"], "without spaces or empty items"),
        (["allreduce", "--env", "A=1,1"], "a value is given twice"),
        (["allreduce", "--env", "RANK=1,2"], "torchrun sets it"),
        (["allreduce", "--backend", "gloo", "--env", "A=1", "--env", "A=2"], "A is given twice"),
        (["pairs", "--env", "A= 1"], "without spaces"),
        (["pairs", "--resume", "results/x", "--dry-run"], "--dry-run checks a new run's options"),
        (["pairs", "--backend", "gloo", "--level", "node", "--dry-run"], "--level node needs"),
        (["ddp", "--backend", "gloo", "--env", "A=1", "--env", "A=2"], "A is given twice"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str], tmp_path: object
) -> None:
    line = usage_error_line([*argv, "--out", f"{tmp_path}/run"], capsys)
    assert says in line


def test_the_trials_noise_keeps_a_healthy_rank_whose_pairs_were_slowed_by_the_box() -> None:
    """4 ranks, rank 2 slow (8 ms pairs); of the healthy pairs 1-3 took 300 us, 0-1 and 0-3
    450 us, as on the loaded box where healthy pairs' p50s scatter 2.5x between rounds. Ranks 1
    and 3 share their best pair, so the others' MAD is 0 and the floor alone scales rank 0's
    1.5x: z = -4.1, flagged. The pairs' own trials say how noisy they were (se 0.2 each, the
    loaded box's 5 trials), and rank 0 stays a healthy rank."""
    time_us = {(0, 1): 450, (0, 2): 8000, (0, 3): 450, (1, 2): 8000, (1, 3): 300, (2, 3): 8000}
    for variance, flagged in ((math.nan, [0, 2]), (0.04, [2])):
        pairs = [(a, b, 1e3 / t, variance) for (a, b), t in time_us.items()]
        assert [s.unit for s in standings(pairs, 3.5) if s.outlier] == flagged


def test_two_ranks_are_one_pair_and_the_table_says_so() -> None:
    """A new user's 2-rank pairs printed robust_z -0.0 and nothing to say that one pair cannot
    tell which end is slow."""
    from distbench.pairs.table import render_standings

    base = {"host": "h", "node": "0", "size_bytes": "65536", "mode": "throughput", "env": "",
            "busbw_GBps": "1.5", "outlier": "false", "level": "rank"}  # fmt: skip
    two = [{**base, "rank": "0", "robust_z": "-0.0"}, {**base, "rank": "1", "robust_z": "0.0"}]
    text = render_standings(two)
    assert "-0.0" not in text
    assert text.splitlines()[-1] == (
        "outliers (ranks): none (2 ranks make one pair: which end of a slow pair is slow cannot "
        "be told; 3 or more can)"
    )
    three = [*two, {**base, "rank": "2", "robust_z": "0.5"}]
    assert render_standings(three).splitlines()[-1] == "outliers (ranks): none"


def test_the_progress_counts_the_pairs_of_the_units_paired() -> None:
    """At node level a row is a pair of nodes: 2 nodes of 2 ranks are 1 pair, not the 6 pairs of
    their 4 ranks that the progress counted (a user saw '6 of 6 measurements' for one pair)."""
    from distbench.pairs.spec import PairsSpec, plan_size

    assert plan_size(PairsSpec(sizes=(1024,), level="rank"), 4) == 6
    assert plan_size(PairsSpec(sizes=(1024,), level="node", nodes=2), 4) == 1
    assert plan_size(PairsSpec(sizes=(1024, 4096), level="node", nodes=3), 6) == 6
