"""Labels that tell the truth, as pure logic with exact values. The half that launches or runs for
seconds; the in-process half, and the file's whole story: tests/unit/reports/test_labels.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

from distbench.collectors.manifest import git_dirty


def test_git_dirty_flag(tmp_path: Path) -> None:
    assert git_dirty(tmp_path) is None  # not a checkout
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q")
    (repo / "a.py").write_text("x = 1\n")
    git("add", "a.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    assert git_dirty(repo) is False
    (repo / "untracked.txt").write_text("")
    assert git_dirty(repo) is False  # untracked files did not run
    (repo / "a.py").write_text("x = 2\n")
    assert git_dirty(repo) is True
