"""A night's launches (#16). The half that launches or runs for seconds; the in-process half, and
the file's whole story: tests/unit/reports/test_launches.py."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.unit.reports.test_compare import comm_row, write_run
from tests.unit.reports.test_launches import FAST, SEPARATED, SLOW, launches


def test_report_pools_a_nights_launches_as_compare_does(tmp_path: Path) -> None:
    """The report of a two-launch night shows one row per case named after the night: its p50
    the geometric mean of the launches', its samples both launches' trials (numbered on), and
    a note; a run outside launch folders is left as it was."""
    from distbench.reports.load import load_runs
    from distbench.reports.report.launch_frames import pool_launches
    from distbench.reports.report.page.build import build_report

    night = launches(tmp_path / "night", FAST, SLOW, sizes=(1024, 2048))
    write_run(night / "launch-3", [(comm_row(4096, SEPARATED, 2), SEPARATED)])
    plain = write_run(tmp_path / "plain", [(comm_row(1024, SEPARATED, 0), SEPARATED)])
    loaded = load_runs([plain, night])
    pool_launches(loaded)
    assert sorted(run.name for run in loaded.runs) == ["night", "run"]  # plain: its run_id
    rows = loaded.comm.set_index(["run", "size_bytes"])
    assert rows.loc[("night", 1024), "time_us_p50"] == pytest.approx(math.sqrt(82.5 * 122.5))
    assert rows.loc[("night", 2048), "time_us_p50"] == pytest.approx(math.sqrt(82.5 * 122.5))
    assert rows.loc[("night", 4096), "time_us_p50"] == pytest.approx(102.0)  # launch-3 alone
    assert rows.loc[("run", 1024), "time_us_p50"] == pytest.approx(102.0)
    measurement = rows.loc[("night", 1024), "measurement"]
    mine = loaded.samples[
        (loaded.samples["run"] == "night") & (loaded.samples["measurement"] == measurement)
    ]
    assert sorted(mine["time_us"]) == sorted(FAST + SLOW)
    assert sorted(mine["trial"]) == list(range(len(FAST) + len(SLOW)))
    assert any(
        "3 launches drawn as one run (launch-1, launch-2, launch-3)" in n for n in loaded.notes
    )

    apart = load_runs([night / "launch-1", night / "launch-2"])  # given one by one: compared
    pool_launches(apart)
    assert len(apart.runs) == 2 and not any("drawn as one run" in n for n in apart.notes)

    files = build_report([str(night)], out=str(tmp_path / "report"))
    text = files.markdown.read_text(encoding="utf-8")
    assert "launches drawn as one run" in text
