"""Pure parts of `distbench pairs` and `--env`: the circle method, robust z-scores, the option
parsers, and every new option's bad input (one line, exit 2)."""

from __future__ import annotations

import pytest

from distbench.cli.envsweep import env_combinations
from distbench.pairs.outliers import robust_z, standings
from distbench.pairs.spec import circle_rounds
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


def test_robust_z_measures_each_unit_against_the_others_with_a_floor() -> None:
    values = {0: 8.0, 1: 9.0, 2: 10.0, 3: 11.0, 4: 12.0, 5: 2.0}
    # unit 5 against 8..12: median 10, deviations 2 1 0 1 2 -> MAD 1, scale max(1.4826, 1.0)
    z = robust_z(values)
    assert z[5] == pytest.approx(-8.0 / 1.4826)
    # unit 2 against 8 9 11 12 2: median 9, deviations 1 0 2 3 7 -> MAD 2, scale max(2.9652, 0.9)
    assert z[2] == pytest.approx(1.0 / (1.4826 * 2))
    # identical ranks: the floor (10 % of the median) keeps a 5 % difference at z = -0.5
    assert robust_z({0: 100.0, 1: 100.0, 2: 100.0, 3: 95.0})[3] == pytest.approx(-0.5)


def test_a_noisy_healthy_rank_does_not_hide_the_slow_one_among_four() -> None:
    # the case seen under load: one healthy rank 45 % above the others, the slow one 40x slower;
    # measured against all four (the slow one included) its z was about -2.3, not flagged
    z = robust_z({0: 10.0, 1: 10.5, 2: 14.5, 3: 0.25})
    assert z[3] <= -3.5
    assert all(z[u] > -3.5 for u in (0, 1, 2))


def test_standings_flag_the_slow_rank_only() -> None:
    slow = 2
    pairs = [(a, b, 1.0 if slow in (a, b) else 10.0) for a in range(4) for b in range(a + 1, 4)]
    found = standings(pairs, threshold=3.5)
    assert [s.unit for s in found if s.outlier] == [slow]
    assert [s.pairs for s in found] == [3, 3, 3, 3]
    assert found[slow].busbw_GBps == 1.0


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
        (["ddp", "--backend", "gloo", "--env", "A=1", "--env", "A=2"], "A is given twice"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str], tmp_path: object
) -> None:
    line = usage_error_line([*argv, "--out", f"{tmp_path}/run"], capsys)
    assert says in line
