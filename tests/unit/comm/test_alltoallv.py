"""alltoallv: the split matrices (--skew, the MoE form), the byte columns and busbw convention, a
real gloo run with --check that report and compare accept, and every bad value in one line."""

from __future__ import annotations

import pytest

from distbench.primitives.all_to_allv import byte_columns, moe_matrix, skew_matrix
from tests.conftest import usage_error_line


def test_uniform_splits_are_all_to_all() -> None:
    """Equal splits: imbalance 1 and nccl-tests' alltoall busbw factor (n - 1)/n."""
    matrix = skew_matrix(4, 400, "uniform", 0.0, seed=0)
    assert matrix == [[100] * 4] * 4
    columns, busiest, factor = byte_columns(matrix, itemsize=4)
    assert busiest == 1600
    assert factor == pytest.approx(3 / 4)
    assert columns["imbalance"] == 1.0
    assert columns["send_bytes_min"] == columns["recv_bytes_max"] == 1600


@pytest.mark.parametrize(("kind", "parameter"), [("zipf", 1.2), ("hot", 0.5), ("hot", 1.0)])
def test_skewed_splits_keep_every_element_and_load_one_receiver(
    kind: str, parameter: float
) -> None:
    n, count = 5, 1001
    matrix = skew_matrix(n, count, kind, parameter, seed=7)
    assert all(sum(row) == count for row in matrix)  # largest remainder: nothing lost
    received = [sum(row[d] for row in matrix) for d in range(n)]
    hot = max(range(n), key=received.__getitem__)
    expected_share = parameter if kind == "hot" else 1 / sum(1 / k**parameter for k in range(1, 6))
    assert matrix[0][hot] == pytest.approx(count * expected_share, abs=1)
    columns, busiest, _ = byte_columns(matrix, itemsize=2)
    assert columns["imbalance"] == pytest.approx(busiest / (2 * count))
    assert columns["recv_bytes_max"] == 2 * received[hot]
    # The seed chooses which destination is hot; the same seed, the same matrix.
    assert skew_matrix(n, count, kind, parameter, seed=7) == matrix
    others = {
        max(range(n), key=skew_matrix(n, count, kind, parameter, s)[0].__getitem__)
        for s in range(20)
    }
    assert len(others) > 1


def test_moe_routing_sends_tokens_times_topk_and_follows_popularity() -> None:
    n, moe = 4, {"tokens": 2000, "hidden": 3, "experts": 8, "topk": 2}
    uniform = moe_matrix(n, moe, "uniform", 0.0, seed=1)
    assert all(sum(row) == 2000 * 2 * 3 for row in uniform)
    assert all(value % 3 == 0 for row in uniform for value in row)  # whole tokens of H
    assert byte_columns(uniform, 4)[0]["imbalance"] < 1.1  # only sampling noise
    hot = moe_matrix(n, moe, "hot", 0.5, seed=1)
    imbalance = byte_columns(hot, 4)[0]["imbalance"]
    # The hot expert takes about half the first choices: its rank gets ~1/2 + ... of the bytes.
    assert 1.5 < imbalance < 3.0
    assert moe_matrix(n, moe, "hot", 0.5, seed=1) == hot  # seeded
    assert moe_matrix(n, moe, "hot", 0.5, seed=2) != hot


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--skew", "zipf"], "is not a skew"),
        (["--skew", "zipf:0"], "exponent must be above 0"),
        (["--skew", "hot:1.5"], "fraction must be above 0 and at most 1"),
        (["--skew", "hot:x"], "is not a number"),
        (["--skew", "uniform:2"], "is not a skew"),
        (["--seed", "-1"], "--seed must be at least 0"),
        (["--tokens", "8"], "go together"),
        (["--tokens", "8", "--hidden", "4", "--experts", "3", "--topk", "1"], "spread evenly"),
        (["--tokens", "8", "--hidden", "4", "--experts", "2", "--topk", "3"], "--topk 3"),
        (
            ["--tokens", "8", "--hidden", "4", "--experts", "2", "--topk", "1", "--sizes", "1K"],
            "drop --sizes",
        ),
    ],
)
def test_bad_alltoallv_input_is_one_line(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = usage_error_line(["alltoallv", "--backend", "gloo", "--world-sizes", "2", *argv], capsys)
    assert fragment in line


@pytest.mark.parametrize("flag", ["--skew zipf:1", "--tokens 4", "--seed 1"])
def test_alltoallv_options_elsewhere_are_one_line(
    flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = usage_error_line(["allreduce", "--backend", "gloo", *flag.split()], capsys)
    assert f"{flag.split()[0]} applies to alltoallv only" in line
    sweep = ["sweep", "--primitives", "alltoallv,allreduce", "--tokens", "4", "--hidden", "2"]
    line = usage_error_line([*sweep, "--experts", "2", "--topk", "1", "--backend", "gloo"], capsys)
    assert "run it with distbench alltoallv alone" in line
