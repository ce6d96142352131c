"""Bad input: one clear line on stderr, exit code 2, no traceback, no run directory left behind. The
half that launches or runs for seconds; the in-process half, and the file's whole story:
tests/unit/cli/test_cli_errors.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import run_cli


def test_bad_input_through_the_installed_command(tmp_path: Path) -> None:
    """The same path in a fresh interpreter, as a user's shell runs it: no traceback. The
    option's parser refused the value, so the line names the option and where its help is."""
    result = run_cli("allreduce", "--sizes", "1X", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "distbench: error: Invalid value for '--sizes': '1X' has an unknown unit 'X': use a "
        "number of bytes with an optional K, M, G or T suffix (binary: 1K = 1024), e.g. 64M "
        "(see 'distbench allreduce --help')"
    ]


def test_unwritable_out(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = run_cli("allreduce", "--sizes", "1K", "--out", str(blocker / "run"), cwd=tmp_path)
    assert result.returncode == 2
    assert "cannot write the run directory" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_existing_run_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.csv").write_text("run_id\n")
    result = run_cli("allreduce", "--sizes", "1K", "--out", str(run), cwd=tmp_path)
    assert result.returncode == 2
    assert "runs are never overwritten" in result.stderr
    assert (run / "results.csv").read_text() == "run_id\n"


def test_help_has_examples() -> None:
    result = run_cli("allreduce", "--help")
    assert result.returncode == 0
    assert "distbench allreduce --backend gloo --sizes 1M,64M" in result.stdout
    top = run_cli("--help")
    assert top.returncode == 0 and "allreduce" in top.stdout


def test_the_cli_imports_torch_only_for_commands_that_measure() -> None:
    """`distbench --help`, compare, report and baseline start in a fraction of a second."""
    code = "import sys, distbench.cli.app; print('torch' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
