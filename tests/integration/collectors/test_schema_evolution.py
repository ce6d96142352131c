"""Schema evolution: runs written by distbench 0.1 (schema v1, tests/data/cluster-a and cluster-b,
frozen as that code wrote them) keep loading in report, compare and baselines after every change.
The half that launches or runs for seconds; the in-process half, and the file's whole story:
tests/unit/collectors/test_schema_evolution.py."""

from __future__ import annotations

import shutil
from pathlib import Path

from distbench.cli.app import run_cli as run_in_process
from tests.paths import DATA
from tests.unit.collectors.test_schema_evolution import as_v2_ddp_run


def test_a_v1_report_and_compare_run_from_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "report"
    code = run_in_process(
        ["report", str(DATA / "cluster-a"), str(DATA / "cluster-b"), "--out", str(out)]
    )
    assert code == 0
    assert (out / "report.html").stat().st_size > 0
    text = (out / "report.md").read_text()  # v1 numbers are shown as written, and said to be
    note = next(line for line in text.splitlines() if "rows from schema v1 runs" in line)
    assert "(cluster-a: 70 comm, 21 ddp; cluster-b: 70 comm, 21 ddp)" in note
    assert "samples_per_s" in note and "comm_share" in note and "upgrading.md#v2" in note
    a, b = DATA / "cluster-a" / "allreduce", DATA / "cluster-b" / "allreduce"
    assert run_in_process(["compare", str(a), str(b), "--threshold", "1000%"]) == 0


def test_report_never_draws_a_speedup_across_a_changed_meaning(tmp_path: Path) -> None:
    """cluster-a's v1 ddp steps against a v2 run: no DDP speedup, a note naming the column and
    both versions; communication rows (whose time_us_p50 kept its meaning) still compare."""
    v2 = as_v2_ddp_run(DATA / "cluster-b" / "ddp", tmp_path / "cluster-b-v2" / "ddp")
    shutil.copytree(DATA / "cluster-b" / "allreduce", tmp_path / "cluster-b-v2" / "allreduce")
    out = tmp_path / "report"
    argv = ["report", str(DATA / "cluster-a"), str(v2.parent), "--out", str(out)]
    assert run_in_process(argv) == 0
    text = (out / "report.md").read_text()
    assert "step_time_us_p50's definition changed in v2" in text
    assert "schema v1, the others v2" in text
    assert "DDP step-time speedup over" not in text
    assert "Speedup over cluster-a" in text
