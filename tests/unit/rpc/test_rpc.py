"""`distbench rpc` on real gloo launches over TensorPipe: a row per pattern and size, each row's
statistics recomputed from samples.csv, report and compare accept the run, and every new
option's bad input is one line with exit 2."""

from __future__ import annotations

import pytest

from tests.conftest import usage_error_line


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--pattern", "sync,pingpong"], "--pattern 'sync,pingpong'"),
        (["--pattern", ""], "--pattern ''"),
        (["--sizes", "2"], "at least 4 bytes"),
        (["--sizes", "big"], "big"),
        (["--window", "0"], "--window must be at least 1"),
        (["--window", "5000"], "--window must be at most 1024"),
        (["--pattern", "sync", "--window", "4"], "--window applies to --pattern async"),
        (["--iters", "0"], "--iters must be at least 1"),
        (["--trials", "0"], "--trials must be at least 1"),
        (["--warmup", "-1"], "--warmup must be at least 0"),
        (["--world-sizes", "1"], "rpc needs at least 2 ranks"),
    ],
)
def test_bad_input_is_one_line(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = usage_error_line(["rpc", "--backend", "gloo", *argv], capsys)
    assert says in line
