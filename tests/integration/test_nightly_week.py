"""ci/nightly.sh in a new user's first week (a review's findings, each reproduced first): the
gate's options are checked before any sweep. (The script's nights: tests/integration/
test_nightly.py; its refusal of 0.2's options: test_nightly_args.py.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.integration.test_nightly import TINY, nightly
from tests.paths import ROOT

RUN = ROOT / "tests" / "data" / "cluster-a" / "allreduce"
"""A real run (the real sinks wrote it), as a baseline compare can judge against itself."""


def sweep_refused(tmp_path: Path) -> str:
    """DISTBENCH for nightly.sh: distbench itself, except that a sweep is recorded in
    tmp_path/sweeps.log and refused (exit 2) instead of run."""
    wrapper = tmp_path / "no-sweep.sh"
    log = tmp_path / "sweeps.log"
    wrapper.write_text(
        f'if [[ $1 == sweep ]]; then echo "$*" >> {log}; exit 2; fi\n'
        f'exec {sys.executable} -m distbench "$@"\n'
    )
    return f"bash {wrapper}"


@pytest.mark.parametrize(
    ("args", "refused"),
    [
        (["--metric", "p42"], "Invalid value for '--metric': unknown metric 'p42'"),
        (["--threshold", "5parsecs"], "'5parsecs' is not a threshold"),
        (["--thresholds", "missing.toml"], "cannot read the thresholds file missing.toml"),
        (["--threshold", "busbw:20us"], "--threshold 20us is in us but busbw_GBps is in GB/s"),
    ],
)
def test_the_gates_options_are_checked_before_any_sweep(
    args: list[str], refused: str, tmp_path: Path
) -> None:
    """A bad --metric, --threshold or --thresholds stops the night at once, in one line, exit 2,
    nothing swept: it failed the gate after the night's sweeps, and left a night marked
    complete that was never gated."""
    config = tmp_path / "tiny.toml"
    config.write_text(TINY)
    night = tmp_path / "night"
    common = ["--config", str(config), "--launches", "1", "--baseline", str(RUN)]
    result = nightly([*common, *args, "--out", str(night)], tmp_path, sweep_refused(tmp_path))
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("nightly.sh: error: the gate's options: "), lines[0]
    assert refused in lines[0] and lines[0].endswith("(nothing swept)"), lines[0]
    assert not (tmp_path / "sweeps.log").exists() and not night.exists()


def test_good_options_pass_the_check_to_the_sweep(tmp_path: Path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(TINY)
    args = ["--config", str(config), "--launches", "1", "--baseline", str(RUN), "--metric", "busbw"]
    good = nightly([*args, "--out", str(tmp_path / "night")], tmp_path, sweep_refused(tmp_path))
    assert good.returncode == 2 and "the sweep refused its configuration" in good.stderr
    assert "the gate's options" not in good.stderr
    assert len((tmp_path / "sweeps.log").read_text().splitlines()) == 1
