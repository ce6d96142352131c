"""`distbench overlap` on real 2-rank gloo groups: rows written and sane (the figures recomputed
from each row's own numbers, the statistics from samples.csv), the check in the overlapped phase
passes and fails under injected faults, report and compare accept the rows, and bad input is one
line with exit 2."""

from __future__ import annotations

import pytest

from tests.conftest import usage_error_line


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--primitives", "sendrecv"], "--primitives 'sendrecv'"),
        (["--primitives", ""], "not a list of collectives"),
        (["--compute", "0"], "--compute must be at least 1"),
        (["--compute", "99999"], "up to 16384"),
        (["--compute-iters", "-1"], "--compute-iters must be at least 0"),
        (["--compute-threads", "two"], "not a whole number"),
        (["--sizes", "1X"], "unknown unit"),
        (["--world-sizes", "1"], "at least 2 ranks"),
        (["--world-sizes", "2,3"], "one --world-sizes value"),
        (["--mode", "fast"], "unknown mode"),
    ],
)
def test_bad_input_is_one_line(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = usage_error_line(["overlap", "--backend", "gloo", *argv], capsys)
    assert says in line
