"""Bad input: one clear line on stderr, exit code 2, no traceback, no run directory left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from distbench.cli.app import run_cli as run_in_process
from tests.conftest import usage_error_line

CASES = [
    (["--sizes", "1X"], "'1X' has an unknown unit"),
    (["--sizes", "-5"], "'-5' is not a size"),
    (["--sizes", "abc"], "'abc' is not a size"),
    (["--sizes", "0"], "'0' is not a positive size"),
    (["--world-sizes", "0"], "a world size must be at least 1"),
    (["--world-sizes", "two"], "'two' is not a whole number"),
    (["--iters", "0"], "--iters must be at least 1"),
    (["--trials", "x"], "'x' is not a whole number"),
    (["--backend", "mpi"], "unknown backend 'mpi'"),
    (["--dtype", "int16"], "unknown dtype 'int16'"),
    (["--backend", "nccl"], "Available here: gloo"),
    (["--device", "cuda"], "needs a CUDA GPU"),
    (["--op", "avg", "--dtype", "int32"], "--op avg cannot reduce int32"),
    (["--op", "xor"], "unknown op 'xor'"),
    (["--mode", "fast"], "unknown mode 'fast'"),
    (["--dtype", "float64", "--sizes", "4"], "smaller than one float64 element"),
    (["--timeout", "-1"], "--timeout must be a positive number"),
    (["--label", "a b"], "label 'a b' is not allowed"),
    (["--sizes", "1K", "--min-size", "1K"], "either --sizes or --min-size"),
    (["--bogus"], "No such option: --bogus"),
]


@pytest.mark.parametrize(("args", "message"), CASES)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert message in usage_error_line(["allreduce", *args], capsys)
    assert not (tmp_path / "results").exists()


def test_a_message_that_names_its_option_is_not_prefixed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert usage_error_line(["allreduce", "--iters", "0"], capsys) == (
        "distbench: error: --iters must be at least 1, got 0 (see 'distbench allreduce --help')"
    )


def test_op_is_refused_where_nothing_is_reduced(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_in_process(["broadcast", "--op", "max", "--sizes", "1K"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "distbench: error: --op applies to reducing primitives (allreduce, reduce, "
        "reducescatter); broadcast moves data unchanged: drop --op"
    ]


@pytest.mark.parametrize(
    "command",
    [["allreduce"], ["sendrecv"], ["pairs"], ["overlap"], ["rpc"]],
    ids=lambda c: c[0],
)
def test_a_size_that_cannot_fit_is_refused_before_launching(
    command: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`1T` typed for `1G`: one line naming the size and what would fit, for every command that
    takes --sizes (comm/memory.py), and no run directory."""
    monkeypatch.chdir(tmp_path)
    line = usage_error_line([*command, "--sizes", "1T", "--world-sizes", "2"], capsys)
    assert "size 1T cannot fit" in line and "give sizes up to about" in line
    assert not (tmp_path / "results").exists()


def test_a_bug_exits_3_never_1_which_the_gate_reads_as_regressed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A crash inside compare (a window of two nights once overflowed exp) exited 1 through
    Python's traceback, and ci/nightly.sh called the night regressed, confirmed. An unexpected
    error now keeps its traceback and exits 3, which the nightly reports as compare failing."""
    import distbench.reports.compare.cli as compare_cli

    def broken(*args: object, **kwargs: object) -> None:
        raise OverflowError("math range error")  # the fault, injected from the test side

    monkeypatch.setattr(compare_cli, "compare_sides", broken)
    monkeypatch.chdir(tmp_path)
    run = Path(__file__).resolve().parents[2] / "data" / "cluster-a" / "allreduce"
    code = run_in_process(["compare", str(run), str(run)])
    err = capsys.readouterr().err
    assert code == 3
    assert "OverflowError: math range error" in err
    assert err.strip().splitlines()[-1].startswith("distbench: internal error (exit 3)")
