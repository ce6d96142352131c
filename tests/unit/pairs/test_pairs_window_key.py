"""`distbench pairs`' send/recv case keeps one name over its sizes (#26 item 11, as sendrecv's in
tests/unit/comm/test_sendrecv_window_key.py): the pattern names the window setting
(`pairs:bidir-window` for the default, `pairs:bidir-window=W` for --window W), not the default
window's count, which shrinks with the size (64 up to 1 MiB, 32 at 2M, 4 at 16M) and split one
case into a case per size in report and compare; the messages in flight are the row's
window_msgs. A real 3-rank run's rows, ranks.csv and the report's pair matrix read right."""

from __future__ import annotations

import math

import torch

from distbench.pairs.rounds import Layout
from distbench.pairs.rows import PairResult, pair_row
from distbench.pairs.spec import PairsSpec
from distbench.spec import LaunchSpec, RunSpec

SIZES = (1 << 20, 16 << 20, 64 << 20)


def cases(level: str = "rank", **options: object) -> list[tuple[str, float]]:
    """(pattern, window_msgs) of one pair's row at 1M, 16M and 64M."""
    workload = PairsSpec(sizes=SIZES, level=level, **options)
    launch = LaunchSpec(backend="gloo", device="cpu", world_sizes=(2,), run_dir="/r", run_id="r")
    spec = RunSpec(launch=launch, workload=workload)
    layout = Layout(units=[[0], [1]], nodes=[0, 1], hosts=["a", "b"])
    found = []
    for size in SIZES:
        result = PairResult("m", (0, 1), "throughput", size, [1.0, 2.0, 3.0, 4.0, 5.0])
        row = pair_row(spec, layout, result, torch.float32, size // 4)
        found.append((row.pattern, row.window_msgs))
    return found


def test_the_default_window_is_one_case_over_sizes() -> None:
    assert cases() == [
        ("pairs:bidir-window", 64.0),
        ("pairs:bidir-window", 4.0),
        ("pairs:bidir-window", 1.0),
    ]
    assert {p for p, _ in cases("node")} == {"node-pairs:bidir-window"}


def test_a_given_window_is_named_and_never_shrinks() -> None:
    assert cases(window=8) == [("pairs:bidir-window=8", 8.0)] * 3


def test_allreduce_pairs_have_no_window() -> None:
    found = cases(primitive="all_reduce")
    assert [p for p, _ in found] == ["pairs"] * 3
    assert all(math.isnan(w) for _, w in found)
