"""--order interleaved (#16): trial t of every measurement of a launch runs in round t. Real
2-rank gloo runs: the rows say how they were measured, every measurement gets all its trials
(samples.csv as in sequential order), checks pass, rows land only after the last round begins;
bad input to the option is one line (exit 2)."""

from __future__ import annotations

import pytest

from tests.conftest import usage_error_line


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["allreduce", "--order", "random"], "order"),
        (
            ["allreduce", "--order", "interleaved", "--precision", "2%"],
            "use --order sequential with --precision",
        ),
    ],
)
def test_bad_order_is_one_line(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert expected in usage_error_line(argv, capsys)
