"""A results.csv read and written back by pandas still matches itself (#26 item 10). The half that
launches or runs for seconds; the in-process half, and the file's whole story:
tests/unit/reports/test_read_by_type.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from distbench.cli.app import run_cli
from distbench.reports.runs import load_run
from tests.conftest import CliRun


@pytest.fixture(scope="module")
def round_trip(tiny_sweep: CliRun, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A real 2-rank gloo sweep (all_reduce and broadcast: root empty and 0 in one file; the
    suite's shared `tiny_sweep`, tests/conftest.py), and a copy whose results.csv pandas read
    and wrote back."""
    original, edited = tiny_sweep.out, tmp_path_factory.mktemp("pandas") / "edited"
    shutil.copytree(original, edited)
    pd.read_csv(original / "results.csv").to_csv(edited / "results.csv", index=False)
    return original, edited


@pytest.mark.slow
def test_pandas_round_trip_really_respells_cells(round_trip: tuple[Path, Path]) -> None:
    """The premise: the written-back file is spelled differently (or the tests below prove
    nothing)."""
    original, edited = (p.joinpath("results.csv").read_text() for p in round_trip)
    assert ",false," in original and ",False," in edited
    assert ",0," in original and ",0.0," in edited


@pytest.mark.slow
def test_compare_finds_every_row_in_common(
    round_trip: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    original, edited = (load_run(p) for p in round_trip)
    assert len(original.rows) == 4  # 2 primitives x 2 sizes
    assert set(edited.rows) == set(original.rows)
    for key, row in original.rows.items():
        assert edited.rows[key].values["root"] == row.values["root"]
        assert edited.rows[key].values["graph"] == row.values["graph"] == "false"
    code = run_cli(["compare", *map(str, round_trip)])
    out = capsys.readouterr()
    assert "no row in common" not in out.out + out.err
    assert code == 0, out.out + out.err
    for primitive in ("all_reduce", "broadcast"):
        assert primitive in out.out


@pytest.mark.slow
def test_report_keeps_its_speedup_section(round_trip: tuple[Path, Path], tmp_path: Path) -> None:
    code = run_cli(["report", *map(str, round_trip), "--out", str(tmp_path / "report")])
    assert code == 0
    text = (tmp_path / "report" / "report.md").read_text()
    assert "Speedup over" in text
    speedups = text.split("Speedup over", 1)[1]
    assert "all_reduce" in speedups and "broadcast" in speedups
