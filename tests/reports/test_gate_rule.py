"""compare's decision rule and what it prints: missing rows fail (exit 4) unless --allow-missing,
Benjamini-Hochberg, adjacent sizes, the verdict first with notes grouped, a bare threshold refused,
independent units (trials; DDP windows; v1 DDP steps are not), a changed definition never compared,
one rule for repeated rows, and `baseline delete`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from distbench.collectors.schema import DdpRow, ResultRow, column_names
from distbench.reports.analysis import assign_sources
from distbench.reports.checks import parse_metric
from distbench.reports.compare import (
    CHANGED,
    EXIT_MISSING,
    NOISE,
    REGRESSED,
    UNCHANGED,
    UNCONFIRMED,
    Comparison,
    compare_runs,
)
from distbench.reports.compare_render import render_text
from distbench.reports.load import load_runs
from distbench.reports.repeats import keep_last_repeats, keep_one_row_per_case
from distbench.reports.runs import load_run
from tests.conftest import usage_error_line
from tests.reports.test_compare import (
    SEPARATED,
    SEPARATED_SLOWER,
    WIDE,
    WIDE_SLOWER,
    cli,
    comm_row,
    ddp_row,
    rule,
    write_run,
)

DATA = Path(__file__).resolve().parents[1] / "data"
SIZES = (1024, 65536, 1 << 20)


def case_rows(
    slow_sizes: tuple[int, ...], **changes: object
) -> list[tuple[ResultRow, list[float]]]:
    """One all_reduce case over SIZES; the sizes in `slow_sizes` 20 % slower, separated."""
    rows = []
    for i, size in enumerate(SIZES):
        times = SEPARATED_SLOWER if size in slow_sizes else SEPARATED
        rows.append((comm_row(size, times, i, **changes), times))
    return rows


def compare_dirs(a: Path, b: Path, **changes: Any) -> Comparison:
    return compare_runs(load_run(a), load_run(b), parse_metric("median"), rule(**changes))


# ---- missing rows -----------------------------------------------------------------------------


def test_rows_missing_tonight_fail_the_gate_and_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write_run(tmp_path / "a", case_rows(()))
    cur = write_run(tmp_path / "b", case_rows(())[:1])
    code, out, _ = cli(["compare", str(base), str(cur)], capsys)
    assert code == EXIT_MISSING == 4
    assert out.startswith("distbench compare: FAILED: rows missing (2 only-baseline, 1 unchanged)")
    assert "missing from the current run: 2: all_reduce 64K float32 n=2" in out
    assert "all_reduce 1M float32 n=2" in out and "--allow-missing" in out
    code, out, _ = cli(["compare", str(base), str(cur), "--allow-missing"], capsys)
    assert code == 0 and out.startswith("distbench compare: pass (2 only-baseline")


# ---- the levers -------------------------------------------------------------------------------


def test_a_regression_needs_two_adjacent_sizes(tmp_path: Path) -> None:
    base = write_run(tmp_path / "a", case_rows(()))
    one = write_run(tmp_path / "one", case_rows((65536,)))
    two = write_run(tmp_path / "two", case_rows((65536, 1 << 20)))
    apart = write_run(tmp_path / "apart", case_rows((1024, 1 << 20)))
    alone = compare_dirs(base, one)
    assert [r.verdict for r in alone.rows] == [UNCHANGED, UNCONFIRMED, UNCHANGED]
    assert alone.exit_code == 0
    assert alone.rows[1].reason == "regressed at one size only, not at a neighbouring size"
    assert [r.verdict for r in compare_dirs(base, two).rows] == [UNCHANGED, REGRESSED, REGRESSED]
    assert [r.verdict for r in compare_dirs(base, apart).rows] == [
        UNCONFIRMED, UNCHANGED, UNCONFIRMED,
    ]  # fmt: skip
    anywhere = compare_dirs(base, one, adjacent=False)
    assert [r.verdict for r in anywhere.rows] == [UNCHANGED, REGRESSED, UNCHANGED]


def test_benjamini_hochberg_across_the_rows(tmp_path: Path) -> None:
    """20 tested rows, one separated +20 % (p = 1/252 = 0.004): BH's q = 0.004 x 20 = 0.079 makes
    it noise; without --fdr it regresses. The chance line says what chance alone gives."""
    jitter = [100.2, 101.5, 100.7, 102.5, 103.7]  # within 0.5 %, no ties
    rows_a, rows_b = [], []
    for i in range(20):
        size = 1024 * (i + 1)
        rows_a.append((comm_row(size, SEPARATED, i, op=f"op{i}"), SEPARATED))
        cur = SEPARATED_SLOWER if i == 0 else jitter
        rows_b.append((comm_row(size, cur, i, op=f"op{i}"), cur))
    a, b = write_run(tmp_path / "a", rows_a), write_run(tmp_path / "b", rows_b)
    with_bh = compare_dirs(a, b)
    assert with_bh.tested == 20
    first = with_bh.rows[0]
    assert first.verdict == NOISE and first.q_value == pytest.approx(20 / 252)
    assert first.note.startswith("q=0.0794 > 0.05")
    assert with_bh.exit_code == 0
    without = compare_dirs(a, b, fdr=False)
    assert without.rows[0].verdict == REGRESSED and without.exit_code == 1
    assert without.chance == pytest.approx(20 * 12 / 252)  # 5 vs 5: P(p <= 0.05) = 12/252
    text = render_text(with_bh)
    assert "chance alone: 0.95 of 20 tested rows would reach p <= 0.05" in text
    assert (
        "Benjamini-Hochberg on: on unchanged code the chance of any false alarm stays <= 5%" in text
    )


def test_the_verdict_comes_first_and_notes_are_grouped(tmp_path: Path) -> None:
    rows_a, rows_b = [], []
    for i in range(6):
        size = 1024 << i
        rows_a.append((comm_row(size, WIDE, i), WIDE))
        rows_b.append((comm_row(size, WIDE_SLOWER, i), WIDE_SLOWER))
    rows_a.append((comm_row(1024, SEPARATED, 6, dtype="bfloat16"), SEPARATED))
    rows_a.append((comm_row(2048, SEPARATED, 7, dtype="bfloat16"), SEPARATED))
    rows_b.append((comm_row(1024, SEPARATED_SLOWER, 6, dtype="bfloat16"), SEPARATED_SLOWER))
    rows_b.append((comm_row(2048, SEPARATED_SLOWER, 7, dtype="bfloat16"), SEPARATED_SLOWER))
    a, b = write_run(tmp_path / "a", rows_a), write_run(tmp_path / "b", rows_b)
    lines = render_text(compare_dirs(a, b)).splitlines()
    assert lines[0] == "distbench compare: REGRESSION (2 regressed, 6 within-noise)"
    assert lines[1].startswith("chance alone:")
    assert lines[3] == "regressed (2):"
    all_rows = lines.index("all rows (8):")
    assert all(i < all_rows for i, line in enumerate(lines) if "bfloat16" in line and i < 8)
    notes = [line for line in lines if "past the threshold, but the samples overlap" in line]
    assert notes == ["  6 within-noise: past the threshold, but the samples overlap (rows 1, 2, 3, "
                     "4, 5, 6)"]  # fmt: skip
    assert lines[-1].startswith("summary: REGRESSION: 2 regressed, 6 within-noise; chance alone:")


def test_a_bare_threshold_is_refused_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write_run(tmp_path / "a", case_rows(()))
    line = usage_error_line(["compare", str(a), str(a), "--threshold", "10"], capsys)
    assert "threshold '10' has no unit: write 10%" in line
    line = usage_error_line(["compare", str(a), str(a), "--threshold", "busbw:20us"], capsys)
    assert "20us is in us but busbw_GBps is in GB/s" in line
    assert cli(["compare", str(a), str(a), "--threshold", "20us"], capsys)[0] == 0
    line = usage_error_line(["compare", str(a), str(a), "--min-samples", "0"], capsys)
    assert "--min-samples '0'" in line


# ---- independent units and schema versions ----------------------------------------------------


def test_ddp_windows_are_the_units_and_v1_steps_are_not(tmp_path: Path) -> None:
    base = [(ddp_row("ddp", SEPARATED, 0), SEPARATED)]
    cur = [(ddp_row("ddp", SEPARATED_SLOWER, 0), SEPARATED_SLOWER)]
    a, b = write_run(tmp_path / "a", base), write_run(tmp_path / "b", cur)
    (row,) = compare_dirs(a, b).rows
    assert row.units == "5 vs 5 windows" and row.p_value == pytest.approx(1 / 252)
    text = render_text(compare_dirs(a, b))
    assert "independent samples: 1 rows at 5 vs 5 windows (smallest p 0.004)" in text
    v1 = DATA / "cluster-a" / "ddp"
    v1_rows = compare_dirs(v1, v1).rows
    assert {r.verdict for r in v1_rows} == {UNCHANGED}
    assert load_run(v1).rows[next(iter(load_run(v1).rows))].units_us == ()
    shifted = compare_dirs(v1, DATA / "cluster-b" / "ddp", min_samples=1)
    tested = [r for r in shifted.rows if r.reason]
    assert tested and all(
        r.reason == "no independent samples (v1 DDP samples are single steps, not independent): "
        "threshold only"
        for r in tested
    )


def v2_copy(v1: Path, target: Path) -> Path:
    """A v1 DDP run as a v2 run would hold it: current columns, schema_version 2."""
    shutil.copytree(v1, target)
    frame = pd.read_csv(target / "results.csv", dtype=str, keep_default_na=False)
    for column in column_names(DdpRow):
        if column not in frame.columns:
            frame[column] = ""
    frame[column_names(DdpRow)].to_csv(target / "results.csv", index=False)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["schema_version"] = 2
    (target / "manifest.json").write_text(json.dumps(manifest))
    return target


def test_a_changed_definition_is_never_compared(tmp_path: Path) -> None:
    v1 = DATA / "cluster-a" / "ddp"
    v2 = v2_copy(v1, tmp_path / "ddp-v2")
    comparison = compare_dirs(v1, v2)
    assert {r.verdict for r in comparison.rows} == {CHANGED}
    row = comparison.rows[0]
    assert row.reason == "definition changed in v2" and row.p_value is None
    assert row.worse_by is None and row.ratio is None
    assert row.note == "step_time_us_p50: baseline v1, current v2: not like with like"
    assert comparison.exit_code == 0
    assert "21 definition-changed" in render_text(comparison).splitlines()[0]


# ---- one rule for repeated rows ---------------------------------------------------------------


def test_a_repeated_row_comes_from_the_run_that_started_last(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    late = write_run(sweep / "a-late", [(comm_row(1024, SEPARATED_SLOWER, 0), SEPARATED_SLOWER)])
    early = write_run(sweep / "b-early", [(comm_row(1024, SEPARATED, 0), SEPARATED)])
    for run, started in ((late, "2026-12-01T02:00:00Z"), (early, "2026-12-01T01:00:00Z")):
        manifest = json.loads((run / "manifest.json").read_text())
        manifest["started_utc"] = started
        (run / "manifest.json").write_text(json.dumps(manifest))
    loaded = load_run(sweep)
    (row,) = loaded.rows.values()
    assert row.run == "a-late" and row.units_us == tuple(SEPARATED_SLOWER)
    assert loaded.duplicate_runs == ("b-early", "a-late")
    base = write_run(tmp_path / "base", [(comm_row(1024, SEPARATED, 0), SEPARATED)])
    comparison = compare_dirs(base, sweep)
    assert comparison.rows[0].verdict == REGRESSED
    repeat_note = (
        "the current run repeats 1 row(s) across b-early, a-late (by start time): each is taken "
        "from the run that started last"
    )
    assert repeat_note in comparison.notes
    # the only other note: the per-primitive test (#16) is off for these sequential runs
    assert all("interleaved" in n for n in comparison.notes if n != repeat_note)


def test_report_keeps_the_same_row_as_compare() -> None:
    frame = pd.DataFrame(
        {
            "source": ["x", "x", "x", "y"],
            "case": ["c", "c", "d", "c"],
            "run": ["late", "early", "early", "late"],
            "time_us_p50": [2.0, 1.0, 5.0, 3.0],
        }
    )
    order = {"early": "2026-12-01T01\0a", "late": "2026-12-01T02\0b"}
    kept, note = keep_last_repeats(frame, ["source", "case"], order, "communication")
    assert kept["time_us_p50"].tolist() == [2.0, 5.0, 3.0]
    assert note is not None and "runs early, late (by start time)" in note
    assert keep_last_repeats(kept, ["source", "case"], order, "x")[1] is None


# ---- baseline delete --------------------------------------------------------------------------


def test_baseline_delete(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_run(tmp_path / "a", case_rows(()))
    store = str(tmp_path / "store")
    assert cli(["baseline", "save", str(a), "--name", "old", "--store", store], capsys)[0] == 0
    (tmp_path / "store" / "notes").mkdir()
    code, out, _ = cli(["baseline", "delete", "old", "--store", store], capsys)
    assert code == 0 and out.startswith("deleted baseline 'old'")
    assert not (tmp_path / "store" / "old").exists()
    line = usage_error_line(["baseline", "delete", "old", "--store", store], capsys)
    assert "no baseline 'old'" in line
    line = usage_error_line(["baseline", "delete", "notes", "--store", store], capsys)
    assert "does not look like a baseline" in line and (tmp_path / "store" / "notes").exists()
    line = usage_error_line(["baseline", "delete", "..", "--store", store], capsys)
    assert "not allowed" in line


def test_report_shows_a_repeated_case_from_the_run_that_started_last(tmp_path: Path) -> None:
    """The same rule in report: two runs of one label measure the same cases; the later one's
    rows are shown (not a median of both) and a note names both runs."""
    runs = []
    for name, started, scale in (("late", "2026-12-02T00:00:00Z", 2.0), ("early", "", 1.0)):
        run = shutil.copytree(DATA / "cluster-a" / "allreduce", tmp_path / name)
        manifest = json.loads((run / "manifest.json").read_text())
        manifest["started_utc"] = started or manifest["started_utc"]
        (run / "manifest.json").write_text(json.dumps(manifest))
        frame = pd.read_csv(run / "results.csv", dtype=str, keep_default_na=False)
        frame["time_us_p50"] = (frame["time_us_p50"].astype(float) * scale).astype(str)
        frame.to_csv(run / "results.csv", index=False)
        runs.append(run)
    loaded = load_runs(runs)
    assert assign_sources(loaded, "label") == "label"
    keep_one_row_per_case(loaded)  # what build_report does next
    original = pd.read_csv(DATA / "cluster-a" / "allreduce" / "results.csv")
    assert len(loaded.comm) == len(original) == 20
    assert sorted(loaded.comm["time_us_p50"]) == pytest.approx(sorted(original["time_us_p50"] * 2))
    assert any("runs allreduce-2, allreduce (by start time)" in note for note in loaded.notes)
