"""An option that takes one value, given twice: click kept the last one silently (`--mode both
--mode latency` measured latency alone; `--sizes 1K --sizes 1M` measured 1M alone). The last one
is still used (scripts put defaults first and overrides after), with a note that says so;
options that repeat (--env) and flags repeat without one."""

from __future__ import annotations

import pytest

from distbench.cli.app import command, given_twice


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["allreduce", "--mode", "both", "--mode", "latency"], "--mode"),
        (["allreduce", "--sizes", "1K", "--sizes=1M"], "--sizes"),
        (["compare", "A", "B", "--metric", "p50", "--metric", "min"], "--metric"),
        (["history", "--glob", "a*", "--glob", "b*"], "--glob"),
        (["baseline", "save", "RUN", "--name", "a", "--name", "b"], "--name"),
        (["allreduce", "-s1K", "-s4K"], "--sizes"),  # short, the value attached
        (["allreduce", "-s", "1K", "--sizes=4K"], "--sizes"),
    ],
)
def test_a_single_value_option_given_twice_is_named(
    argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from distbench.cli.app import run_cli

    assert given_twice(command(), argv) == named
    run_cli([*argv, "--help"])
    note = capsys.readouterr().err
    assert f"distbench: note: {named} is given more than once: the last one is used" in note


@pytest.mark.parametrize(
    "argv",
    [
        ["allreduce", "--env", "A=1,2", "--env", "B=3"],  # repeatable
        ["allreduce", "--quiet", "--quiet"],  # a flag
        ["allreduce", "--sizes", "1K", "--", "--sizes"],  # after --: not options
        ["allreduce", "--sizes", "1K,1M"],
        ["allreduce", "--label", "--sizes", "--sizes", "4K"],  # a value like an option
    ],
)
def test_repeatable_options_and_flags_may_repeat(argv: list[str]) -> None:
    assert given_twice(command(), argv) is None
