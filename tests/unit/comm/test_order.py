"""--order interleaved (#16): trial t of every measurement of a launch runs in round t. Real
2-rank gloo runs: the rows say how they were measured, every measurement gets all its trials
(samples.csv as in sequential order), checks pass, rows land only after the last round begins;
bad input to the option is one line (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import usage_error_line


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["allreduce", "--order", "random"], "order"),
        (
            ["allreduce", "--order", "interleaved", "--precision", "2%"],
            "use --order grouped or sequential with --precision",
        ),
    ],
)
def test_bad_order_is_one_line(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert expected in usage_error_line(argv, capsys)


@pytest.mark.parametrize(
    ("argv", "order"),
    [
        ([], "sequential"),  # throughput: its interval held under drift
        (["--mode", "latency"], "grouped"),  # a latency row's interval needs its trials apart
        (["--mode", "both"], "grouped"),
        (["--mode", "latency", "--precision", "5%"], "grouped"),  # 3 in flight: comm/window.py
        (["--precision", "5%"], "sequential"),  # throughput: one sample a trial, its own rule
        (["--mode", "latency", "--order", "sequential"], "sequential"),
        (["--order", "interleaved"], "interleaved"),
        (["--order", "grouped"], "grouped"),
    ],
)
def test_auto_order_is_grouped_in_latency_mode_only_where_trials_may_be_spread(
    argv: list[str], order: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--order auto (the default) resolves before the spec is written: the rows and spec.json
    say the order that ran, never 'auto'."""
    import json

    from distbench.cli.app import run_cli

    assert run_cli(["allreduce", "--backend", "gloo", "--sizes", "1K", *argv, "--dry-run"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["launches"][0]["workload"]["trial_order"] == order


def test_auto_is_sequential_where_one_case_is_measured_at_a_time() -> None:
    """--buffers symmetric and --cuda-graph measure one case at a time (comm/gpu_modes.py): auto
    resolves to sequential there even in latency mode, so a GPU run is not refused for an order
    it never asked for."""
    from distbench.comm.args import CommArgs, resolve_order

    assert resolve_order(CommArgs(mode=("latency",))) == "grouped"
    assert resolve_order(CommArgs(mode=("latency",), buffers="symmetric")) == "sequential"
    assert resolve_order(CommArgs(mode=("throughput",), cuda_graph=2)) == "sequential"
    assert resolve_order(CommArgs(mode=("latency",), order="interleaved")) == "interleaved"


def test_a_begin_line_tells_the_cases_of_one_size_apart() -> None:
    """sendrecv --pairs all measures every ordered pair at each size: the begin line (the
    progress line and a hang's diagnosis read it) names the case's labels, empty ones left out."""
    import torch

    from distbench.comm.interleave import Pending, begin_line
    from distbench.primitives.base import Case, CaseRequest

    labels = {"src": "0", "dst": "3", "pattern": "pingpong", "root": ""}
    case = Case(1024, 256, lambda: None, lambda: 0, labels)
    request = CaseRequest(1024, torch.float32, "sum", "0", {}, "c10d")
    pending = Pending("ws4/i2", "send_recv", "float32", "throughput", request, 2, None, 1024)
    line = begin_line(pending, case)
    assert line == (
        "begin ws4/i2 send_recv float32 throughput size=1024 src=0 dst=3 pattern=pingpong"
    )
    assert begin_line(pending) == "begin ws4/i2 send_recv float32 throughput size=1024"
    pending.labels = " src=0 dst=3 pattern=pingpong"  # kept from its warm-up (interleave.prepare)
    assert begin_line(pending) == line  # a case above KEEP_BYTES, not built between visits


def test_latency_rows_asked_sequentially_are_told_what_it_costs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--order sequential with latency rows: a note of what the order costs their intervals
    (measured: docs/measurement.md), once, on stderr; not for the default order, nor for
    throughput rows, whose order-statistic interval held under drift."""
    from distbench.cli.app import run_cli

    monkeypatch.chdir(tmp_path)
    base = ["allreduce", "--sizes", "1K", "--dry-run"]
    assert run_cli([*base, "--mode", "latency", "--order", "sequential"]) == 0
    err = capsys.readouterr().err
    assert err.count("note: --order sequential: each latency row's trials run back to back") == 1
    for other in (["--mode", "latency"], ["--order", "sequential"]):
        assert run_cli([*base, *other]) == 0
        assert "note: --order sequential" not in capsys.readouterr().err
