"""compare and the p50's confidence intervals (#14 §2): a row whose CIs overlap the threshold
band's edge says so in one note line; a row clearly past (or clearly inside) it does not; runs
without intervals (schema v2, fewer than 6 samples) add nothing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from distbench.cli.app import run_cli
from distbench.stats import Stats
from tests.reports.test_compare import comm_row, write_run

STEADY = [99.0, 99.5, 100.0, 100.2, 100.4, 100.5, 100.6, 101.0, 99.8, 100.1]
SPREAD = [88.0, 92.0, 96.0, 100.0, 103.0, 106.0, 110.0, 114.0, 118.0, 122.0]  # p50 104.5
CLEAR = [x * 1.3 for x in STEADY]  # 30 % slower, intervals far apart


def with_ci(size: int, samples: list[float], index: int) -> tuple[object, list[float]]:
    low, high = Stats(tuple(samples)).p50_ci()
    row = comm_row(size, samples, index, ci_low_us=low, ci_high_us=high)
    return replace(row, trials_run=len(samples)), samples


def test_overlapping_intervals_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sizes = (1 << 20, 4 << 20)
    a = write_run(tmp_path / "a", [with_ci(s, STEADY, i) for i, s in enumerate(sizes)])
    b = write_run(tmp_path / "b", [with_ci(sizes[0], SPREAD, 0), with_ci(sizes[1], CLEAR, 1)])
    code = run_cli(["compare", str(a), str(b), "--threshold", "5%"])
    out = capsys.readouterr().out
    assert code in (0, 1), out
    [line] = [x for x in out.splitlines() if "overlap the threshold band" in x]
    # row 1: current [92, 118] (n = 10: 2nd and 9th) over base [99.5, 100.6]: 92/100.6 to 118/99.5
    assert "1 rows' 95 % CIs of the p50" in line
    assert "rows 1 (0.915-1.186)" in line
    assert " 2 (" not in line  # 1.3x: past the edge whatever the noise


def test_no_intervals_no_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_run(tmp_path / "a", [(comm_row(1 << 20, STEADY, 0), STEADY)])
    b = write_run(tmp_path / "b", [(comm_row(1 << 20, SPREAD, 0), SPREAD)])
    run_cli(["compare", str(a), str(b), "--threshold", "5%"])
    assert "overlap the threshold band" not in capsys.readouterr().out
