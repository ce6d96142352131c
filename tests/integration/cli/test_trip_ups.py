"""A new user's smaller trip-ups (issue #26 item 11), each as the user met it. The half that
launches or runs for seconds; the in-process half, and the file's whole story:
tests/unit/cli/test_trip_ups.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT as REPO


def test_plain_pytest_skips_the_benchmark_example_pointing_to_bench_tests(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(REPO / "ci" / "test_bench_allreduce.py"), "-rs"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    skips = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skips and all("ci/bench-tests.sh" in line for line in skips), result.stdout
    assert not any("torch.distributed.run" in line for line in skips)


def test_the_default_history_folder_is_ignored_by_git(tmp_path: Path) -> None:
    """`distbench history` writes ./history by default (as report writes ./report): in a clone,
    git ignores it, so a user's `git status` stays clean."""
    from distbench.cli.history import HistoryOptions

    assert HistoryOptions().out == "history"
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    found = subprocess.run(
        ["git", "check-ignore", "-q", "history/history.html"], cwd=REPO, check=False
    )
    assert found.returncode == 0, "history/ is not in .gitignore"
