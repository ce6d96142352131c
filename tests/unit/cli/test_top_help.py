"""`distbench` alone and `distbench --help`: the map of the commands. A new user found bare
`distbench` printed as an error (exit 2) and every command's summary cut mid-phrase."""

from __future__ import annotations

import pytest

from distbench.cli.app import SHORT_HELP, command, run_cli


def test_bare_distbench_prints_the_help_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli([]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("Usage: distbench [OPTIONS] COMMAND") and err == ""
    assert run_cli(["baseline"]) == 0  # a group alone: its help too
    assert "Usage: distbench baseline" in capsys.readouterr().out


def test_every_command_has_a_summary_that_fits_and_measuring_comes_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert set(SHORT_HELP) == set(command().commands)
    run_cli(["--help"])
    listed = capsys.readouterr().out.split("Commands:\n", 1)[1].splitlines()
    names = [line.split()[0] for line in listed if line.strip()]
    assert names == list(SHORT_HELP)
    assert not any(line.rstrip().endswith("...") for line in listed)  # nothing cut
    assert names.index("acceptance") < names.index("report")
