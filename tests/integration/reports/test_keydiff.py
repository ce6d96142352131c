"""--env on one side no longer cancels a comparison in silence (issue #26 item 8). The half that
launches or runs for seconds; the in-process half, and the file's whole story:
tests/unit/reports/test_keydiff.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import ALLREDUCE_2RANK, CliRun, run_cli, run_in_process


@pytest.mark.slow
def test_a_report_of_a_run_with_env_and_one_without_says_why_nothing_compared(
    allreduce_2rank: CliRun, tmp_path: Path
) -> None:
    """'plain' is a copy of the suite's shared 2-rank allreduce (tests/conftest.py); 'knob' is
    the same command with --env."""
    shutil.copytree(allreduce_2rank.out, tmp_path / "plain")
    knob = ["--env", "DISTBENCH_TEST_KNOB=1", "--out", str(tmp_path / "knob")]
    with_env = run_cli(*ALLREDUCE_2RANK, *knob)
    assert with_env.returncode == 0, with_env.stderr
    report = run_in_process("report", str(tmp_path / "plain"), str(tmp_path / "knob"), "--out",
                     str(tmp_path / "r"))  # fmt: skip
    assert report.returncode == 0, report.stderr
    text = (tmp_path / "r" / "report.md").read_text()
    lead = text.split("## ")[0]  # the headline opens the page
    assert "Nothing of knob was compared with plain" in lead, lead
    assert (
        "they differ only in env: empty (no --env) in plain, 'DISTBENCH_TEST_KNOB=1' in knob"
        in lead
    )
    assert "they differ only in env" in (tmp_path / "r" / "report.html").read_text()
