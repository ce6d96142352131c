"""A night's launches (#16): ci/nightly.sh --launches 2 sweeps into RUN/launch-1 and RUN/launch-2;
history and the report read such a night as one point, one row per case (the geometric mean of its
launches'). On fixture runs written with the real sinks; compare's launches as units:
test_compare.py."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from distbench.reports.compare.sides import launch_dirs
from tests.unit.reports.test_compare import comm_row, write_run

FAST = [80.0, 81.0, 82.0, 83.0, 84.0, 85.0]
SLOW = [120.0, 121.0, 122.0, 123.0, 124.0, 125.0]
SEPARATED = [100.0, 101.0, 102.0, 103.0, 104.0]


def launches(path: Path, *samples: list[float], sizes: tuple[int, ...] = (1024,)) -> Path:
    """A run directory of launch-1 ... launch-N, launch i measuring `samples[i]` at each size."""
    for number, times in enumerate(samples, 1):
        interval = {"ci_low_us": times[1], "ci_high_us": times[-2]}
        rows = [(comm_row(size, times, i, **interval), times) for i, size in enumerate(sizes)]
        write_run(path / f"launch-{number}", rows)
    return path


def test_launch_folders_sort_by_number_and_other_folders_are_ignored(tmp_path: Path) -> None:
    run = tmp_path / "night"
    for number in (10, 2, 1):
        times = [float(number)] * 5
        write_run(run / f"launch-{number}", [(comm_row(1024, times, 0), times)])
    (run / "launch-x").mkdir()  # not a launch: ignored
    (run / "report").mkdir()
    assert [d.name for d in launch_dirs(run)] == ["launch-1", "launch-2", "launch-10"]


def test_history_gives_a_night_of_two_launches_one_pooled_point(tmp_path: Path) -> None:
    """history reads a night as compare does: one point per case and statistic (its fastest
    trial below, history's default series), the geometric mean of its launches' values (not the
    last launch's, not one point per launch), low and high its lowest and highest launch; a row
    held by one launch is its own."""
    from distbench.reports.history.load import read_points

    night = launches(tmp_path / "night", FAST, SLOW)
    write_run(night / "launch-3", [(comm_row(2048, SEPARATED, 1), SEPARATED)])
    info, every = read_points(night)
    assert info.name == "night"
    points = every[every["metric"] == "time_us_min"]
    times = points.set_index("case")["value"]
    assert len(times) == len(points) == 2
    assert every.groupby("metric").size().eq(2).all()  # each statistic: one point per case
    both = next(case for case in times.index if case.endswith(" 1K"))
    assert times[both] == pytest.approx(math.sqrt(80.0 * 120.0))
    low, high = points[points["case"] == both].iloc[0][["low", "high"]]
    assert (low, high) == (80.0, 120.0)
    alone = next(case for case in times.index if case.endswith(" 2K"))
    plain = read_points(night / "launch-3")[1]
    assert times[alone] == pytest.approx(plain[plain["metric"] == "time_us_min"]["value"].iloc[0])
