"""ci/nightly.sh refuses 0.2.0's trial-level options of compare at once, in one line, exit 2: it
passed them on to compare, which refuses them, so a night swept its launches for minutes before
it failed. (The script's nights: tests/integration/test_nightly.py.)"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.paths import ROOT


@pytest.mark.parametrize(
    "args",
    [["--min-samples", "3"], ["--fdr"], ["--no-fdr"], ["--any-size"], ["--adjacent"]],
)
def test_removed_compare_options_are_refused_before_any_sweep(
    args: list[str], tmp_path: Path
) -> None:
    result = subprocess.run(
        ["bash", str(ROOT / "ci" / "nightly.sh"), *args, "--out", str(tmp_path / "night")],
        capture_output=True, text=True, timeout=30, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{args[0]} was removed in 0.3" in lines[0], result.stderr
    assert not (tmp_path / "night").exists()  # nothing was swept
