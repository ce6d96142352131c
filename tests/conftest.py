"""Shared helpers: run the real `distbench` CLI in a fresh interpreter, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def run_cli(
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    return subprocess.run(
        [sys.executable, "-m", "distbench", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
        check=False,
    )


def usage_error_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the CLI in-process on bad input; assert exit 2 and exactly one 'distbench: error:'
    line on stderr, and return that line."""
    from distbench.cli.app import run_cli as run_in_process

    code = run_in_process(argv)
    stderr = capsys.readouterr().err
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("distbench: error: "), lines[0]
    return lines[0]


@pytest.fixture
def cli():
    return run_cli
