"""The report's verdicts and speedup intervals come from compare's own comparison (#25 item 6,
reports/report/verdicts.py): the launch is the unit, so a shift common to a launch is noise, not a
finding. Behaviour only; how often the intervals cover belongs to the benchmark (ci/bench_stats).

- a box compared with itself, its launches 5 % apart, is never called slower (0.2.0 headlined
  "slower (0.86-0.98x)" in 17 of 30 such reports); one launch a source says that cluster and
  launch cannot be told apart;
- a real 25 % slowdown with several launches a side is called regressed (slower);
- report and compare give the same state on every common row: canned launches, the frozen
  fixtures (tests/data), and real gloo runs;
- the summary's "every size" is the geometric mean over every size of a case (0.2.0's "geo. mean
  of those" averaged only the sizes already called, and overstated a change of one size).

Launches are written with the real sinks by tests/unit/reports/test_compare.py's helpers.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.unit.reports.test_report_uncertainty import (
    assert_report_equals_compare,
)


@pytest.mark.slow
def test_report_equals_compare_on_real_gloo_runs(tiny_sweeps: list[Path], tmp_path: Path) -> None:
    """Three real 2-rank sweeps (all_reduce and broadcast at 1K and 16K; the suite's shared
    `tiny_sweeps`, tests/conftest.py); two of them as a night of two launches, as ci/nightly.sh
    writes it."""
    runs = tiny_sweeps
    nightly = tmp_path / "night"
    for number, run in enumerate(runs[:2], 1):
        shutil.copytree(run, nightly / f"launch-{number}")
    assert_report_equals_compare(runs[0], runs[2])
    common = assert_report_equals_compare(nightly, runs[2])
    assert set(common["launches_base"]) == {2}
