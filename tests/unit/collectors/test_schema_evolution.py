"""Schema evolution: runs written by distbench 0.1 (schema v1, tests/data/cluster-a and cluster-b,
frozen as that code wrote them) keep loading in report, compare and baselines after every change;
a changed meaning is never compared in silence; a run of a newer schema is refused with one line."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from distbench.cli.app import run_cli as run_in_process
from distbench.collectors.migrations import (
    MIGRATIONS,
    changed_meaning,
    columns_at,
    upgrade_columns,
)
from distbench.collectors.ranks import RankRow
from distbench.collectors.schema import (
    SCHEMA_VERSION,
    DdpRow,
    ResultRow,
    SampleRow,
    column_names,
)
from distbench.reports.compare.sides import load_side
from distbench.reports.compare.window import save_night
from distbench.reports.load import load_runs
from distbench.reports.runs import load_run
from tests.conftest import usage_error_line
from tests.paths import DATA

V1_RUNS = sorted(p for cluster in ("cluster-a", "cluster-b") for p in (DATA / cluster).iterdir())


def test_the_v1_fixtures_are_frozen_as_the_first_release_wrote_them() -> None:
    """Every byte of the v1 run directories matches the checksums taken when they were frozen."""
    listed = (DATA / "v1-frozen.sha256").read_text().splitlines()
    assert len(listed) == 30
    for line in listed:
        digest, name = line.split(maxsplit=1)
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest, name
    for run in V1_RUNS:
        assert json.loads((run / "manifest.json").read_text())["schema_version"] == 1


def test_the_migration_table_covers_every_version_up_to_the_current_one() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, SCHEMA_VERSION + 1))
    kinds = (("comm", ResultRow), ("ddp", DdpRow), ("samples", SampleRow), ("ranks", RankRow))
    for kind, row_type in kinds:
        assert columns_at(kind, SCHEMA_VERSION) == column_names(row_type)
        added, dropped = upgrade_columns(kind, SCHEMA_VERSION)
        assert (added, dropped) == ({}, [])
        added, dropped = upgrade_columns(kind, 1)
        assert set(columns_at(kind, 1)) - set(dropped) | set(added) == set(column_names(row_type))


def test_changed_meaning_names_the_version_in_either_direction() -> None:
    assert changed_meaning("ddp", "step_time_us_p50", 1, 2) == 2
    assert changed_meaning("ddp", "step_time_us_p50", 2, 1) == 2
    assert changed_meaning("ddp", "step_time_us_p50", 2, 2) is None
    assert changed_meaning("comm", "time_us_p50", 1, SCHEMA_VERSION) is None


@pytest.mark.parametrize("run", V1_RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_v1_run_loads_for_compare_and_baselines(run: Path, tmp_path: Path) -> None:
    loaded = load_run(run)
    assert loaded.schema_version == 1
    assert loaded.rows
    kind = next(iter(loaded.rows.values())).kind
    for row in loaded.rows.values():
        assert set(row.values) >= set(columns_at(kind, SCHEMA_VERSION))
    saved, _what = save_night(run, "v1", tmp_path / "store")
    side = load_side(saved)
    assert side.window
    assert [launch.run.schema_version for launch in side.launches] == [1]


def test_v1_runs_load_for_report_with_current_columns() -> None:
    loaded = load_runs([DATA / "cluster-a", DATA / "cluster-b"])
    assert {run.schema_version for run in loaded.runs} == {1}
    assert set(column_names(ResultRow)) <= set(loaded.comm.columns)
    assert set(column_names(DdpRow)) <= set(loaded.ddp.columns)
    assert len(loaded.comm) == 2 * (20 + 10 + 10 + 30)
    assert len(loaded.ddp) == 2 * 21


def test_a_run_of_a_newer_schema_is_refused_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "future"
    shutil.copytree(DATA / "cluster-a" / "allreduce", run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["schema_version"] = SCHEMA_VERSION + 1
    (run / "manifest.json").write_text(json.dumps(manifest))
    for argv in (
        ["report", str(run), "--out", str(tmp_path / "r")],
        ["compare", str(run), str(run)],
    ):
        line = usage_error_line(argv, capsys)
        assert f"newer distbench (schema v{SCHEMA_VERSION + 1})" in line
        assert "upgrade distbench" in line


def test_version_flag_names_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    from distbench import __version__

    assert run_in_process(["--version"]) == 0
    assert capsys.readouterr().out.strip() == (
        f"distbench {__version__} (results schema v{SCHEMA_VERSION})"
    )


def as_v2_ddp_run(source: Path, target: Path) -> Path:
    """A copy of a v1 ddp run relabelled as schema v2 (its columns upgraded as v2 writes them)."""
    import pandas as pd

    shutil.copytree(source, target)
    rows = pd.read_csv(target / "results.csv", dtype=str, keep_default_na=False)
    rows = rows.drop(columns=["overlap"]).assign(window_steps="1", comm_hidden_share="")
    rows[columns_at("ddp", 2)].to_csv(target / "results.csv", index=False)  # v2's, not today's
    samples = pd.read_csv(target / "samples.csv", dtype=str, keep_default_na=False)
    samples.assign(run_id="")[column_names(SampleRow)].to_csv(target / "samples.csv", index=False)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["schema_version"] = 2
    (target / "manifest.json").write_text(json.dumps(manifest))
    return target


def test_rows_that_match_only_across_a_changed_meaning_are_named_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A v1 ddp run against the same rows as v2 wrote them: every row matches and none can be
    compared (step times changed meaning in v2). compare said "no row in common: ... compare runs
    of the same sweep", which they were."""
    v2 = as_v2_ddp_run(DATA / "cluster-a" / "ddp", tmp_path / "v2" / "ddp")
    line = usage_error_line(["compare", str(DATA / "cluster-a" / "ddp"), str(v2)], capsys)
    assert "rows they share cannot be compared: step_time_us_p50 changed meaning" in line, line
    assert "no row in common" not in line and "upgrading.md" in line
