"""send/recv: the option parsers, which cases a size gives, how a sample is scaled to one message,
and `distbench sendrecv --pairs all` on a real 3-rank gloo group."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from distbench.cli.app import run_cli as run_in_process
from distbench.comm.primitive_args import (
    PrimitiveArgs,
    build_primitive_options,
    parse_pairs,
    parse_patterns,
    parse_window,
)
from distbench.parse import UsageError
from distbench.primitives.base import CaseRequest, Context
from distbench.primitives.facts import pattern_cases, resolve_pairs
from distbench.primitives.send_recv import SendRecv, default_window


def context(world_size: int) -> Context:
    return Context(
        rank=0,
        world_size=world_size,
        device=torch.device("cpu"),
        backend="gloo",
        global_ranks=tuple(range(world_size)),
    )


def test_parse_pairs() -> None:
    assert parse_pairs("0:1") == [[0, 1]]
    assert parse_pairs(" 1:0 , 0:2,1:0") == [[1, 0], [0, 2]]
    assert parse_pairs("ALL") == "all"
    for bad, message in (("0-1", "is not SRC:DST"), ("1:1", "to itself"), ("", "not a list")):
        with pytest.raises(UsageError, match=message):
            parse_pairs(bad)


def test_parse_patterns_and_window() -> None:
    assert parse_patterns("ring") == ["ring"]
    assert parse_patterns("window,pingpong,window") == ["window", "pingpong"]
    assert parse_patterns("all") == ["pingpong", "window", "ring", "multipair"]
    with pytest.raises(UsageError, match="unknown --pattern 'bw'"):
        parse_patterns("bw")
    assert parse_window("16") == 16
    with pytest.raises(UsageError, match="at least 1"):
        parse_window("0")
    with pytest.raises(UsageError, match="at most 1024"):
        parse_window("5000")


def test_all_pairs_are_every_ordered_pair() -> None:
    assert resolve_pairs("all", 3) == [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]
    assert len(resolve_pairs("all", 8)) == 56
    assert resolve_pairs([[2, 0]], 3) == [(2, 0)]
    assert resolve_pairs(None, 4) == [(0, 1)]


def test_cases_per_size() -> None:
    prim = SendRecv()
    options = {"patterns": ["pingpong", "window", "ring"], "pairs": "all"}
    assert prim.case_count(3, "0", options) == 6 + 6 + 1
    assert pattern_cases(2, {"patterns": ["ring"]}) == [("ring", -1, -1)]
    assert prim.case_count(4, "0", {}) == 2  # default: pingpong and window, pair 0:1
    both = {"patterns": ["ring", "multipair"]}
    assert pattern_cases(4, both) == [("ring", -1, -1), ("multipair", -1, -1)]
    assert pattern_cases(3, both) == [("ring", -1, -1)]  # no i + n/2 partner at odd n


def test_multipair_counts_every_pair_s_messages() -> None:
    """n/2 pairs x a window of W (x 2 both ways): algbw is the aggregate, as osu_mbw_mr."""
    prim = SendRecv()
    options = {"patterns": ["multipair"], "window": 8}
    request = CaseRequest(1024, torch.float32, "sum", "0", options)
    [one_way] = prim.build_cases(context(6), request)
    assert one_way.labels == {"src": "0-2", "dst": "3-5", "pattern": "multipair-window=8"}
    assert one_way.ops_per_run == 3 * 8
    request = CaseRequest(1024, torch.float32, "sum", "0", {**options, "bidirectional": True})
    [both] = prim.build_cases(context(2), request)
    assert both.labels == {"src": "0", "dst": "1", "pattern": "multipair-bidir-window=8"}
    assert both.ops_per_run == 1 * 8 * 2


def test_the_default_window_keeps_a_window_under_64_mib() -> None:
    assert [default_window(s) for s in (8, 1 << 20, 2 << 20, 4 << 20, 64 << 20, 1 << 30)] == [
        64,
        64,
        32,
        16,
        1,
        1,
    ]
    cases = SendRecv().build_cases(context(2), CaseRequest(4 << 20, torch.uint8, "sum", "0", {}))
    assert [c.labels["pattern"] for c in cases] == ["pingpong", "window"]  # 16 in flight
    assert cases[1].columns["window_msgs"] == 16


def test_a_sample_is_scaled_to_one_message() -> None:
    """ping-pong: round trip / 2; a window of W: / W; bidirectional: / 2W (bytes both ways)."""
    prim = SendRecv()
    options = {"patterns": ["pingpong", "window", "ring"], "window": 16}
    cases = prim.build_cases(context(2), CaseRequest(1024, torch.float32, "sum", "0", options))
    assert [(c.labels["pattern"], c.ops_per_run) for c in cases] == [
        ("pingpong", 2),
        ("window=16", 16),
        ("ring", 1),
    ]
    assert [(c.labels["src"], c.labels["dst"]) for c in cases] == [
        ("0", "1"),
        ("0", "1"),
        ("all", "next"),
    ]
    options = {"patterns": ["window"], "bidirectional": True}
    bidir = prim.build_cases(context(2), CaseRequest(8, torch.int8, "sum", "0", options))
    assert [(c.labels["pattern"], c.ops_per_run) for c in bidir] == [("bidir-window", 128)]
    assert {c.size_bytes for c in cases} == {1024}


def test_options_are_checked_against_the_world_sizes() -> None:
    args = PrimitiveArgs(pairs="all", pattern=["pingpong", "window"], window=8, bidirectional=True)
    root, options = build_primitive_options(["send_recv"], args, [2, 3])
    assert root == "0"
    assert options == {
        "patterns": ["pingpong", "window"],
        "pairs": "all",
        "window": 8,
        "bidirectional": True,
    }
    assert build_primitive_options(["send_recv"], PrimitiveArgs(), [2])[1]["window"] is None
    with pytest.raises(UsageError, match="names rank 2, which world size 2 lacks"):
        build_primitive_options(["send_recv"], PrimitiveArgs(pairs=[[0, 2]]), [2, 3])
    with pytest.raises(UsageError, match="two ranks or more"):
        build_primitive_options(["send_recv"], PrimitiveArgs(), [1])
    with pytest.raises(UsageError, match="--window applies to --pattern window"):
        build_primitive_options(["send_recv"], PrimitiveArgs(pattern=["ring"], window=4), [2])
    with pytest.raises(UsageError, match="--pairs applies to sendrecv only"):
        build_primitive_options(["all_reduce"], PrimitiveArgs(pairs=[[0, 1]]), [2])


ERRORS = [
    (["sendrecv", "--pairs", "0-1"], "'0-1' is not SRC:DST"),
    (["sendrecv", "--pairs", "0:5"], "names rank 5, which world size 2 lacks"),
    (["sendrecv", "--window", "x"], "'x' is not a whole number"),
    (["sendrecv", "--pattern", "ring", "--bidirectional"], "--bidirectional applies to"),
    (["sendrecv", "--world-sizes", "1"], "sendrecv needs two ranks or more"),
    (
        ["sendrecv", "--pattern", "multipair", "--world-sizes", "2,3"],
        "--pattern multipair pairs rank i with i + n/2, which world size 3 (odd) cannot",
    ),
    (
        ["sendrecv", "--pattern", "multipair", "--pairs", "0:1"],
        "--pairs applies to --pattern pingpong and window (ring and multipair use every rank)",
    ),
    (["sendrecv", "--pattern", "multipair", "--window", "0"], "--window must be at least 1"),
    (["broadcast", "--root", "2"], "--root 2 is not a rank at world size 2"),
    (["reduce", "--root", "first"], "--root 'first' is not a rank"),
    (
        ["allreduce", "--root", "1"],
        "--root applies to broadcast, reduce, gather only (and sweep measuring one of them)",
    ),
    (
        ["sweep", "--primitives", "allreduce,allgather", "--root", "1"],
        "--root applies to broadcast, reduce, gather only (and sweep measuring one of them)",
    ),
    (["allgather", "--window", "4"], "--window applies to sendrecv only"),
    (["alltoall", "--sizes", "4", "--world-sizes", "2"], "use sizes of at least 32 B"),
]


@pytest.mark.parametrize(("args", "message"), ERRORS)
def test_bad_primitive_options_are_one_line_and_exit_2(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code = run_in_process([*args, "--backend", "gloo", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()
