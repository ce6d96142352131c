"""`distbench history` (reports/history*.py, bench/cli/history.py). The half that launches or runs
for seconds; the in-process half, and the file's whole story: tests/unit/reports/test_history.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from tests.paths import DATA
from tests.unit.reports.test_history import (
    NIGHTS,
    STEP_AT,
    bench_history,
    history,
    read_csv,
    resolvable,
    upgraded_copy,
)


def test_a_20_percent_step_is_found_at_its_night_and_fails_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every case 20 % slower from night 40: --absolute finds it in each case; the default
    (relative) finds it once, in the whole run, and in few cases beyond the rest of the run."""
    bench_history().build_history(tmp_path / "runs", NIGHTS, 108, STEP_AT, seed=3)
    out = tmp_path / "history"
    argv = ["--glob", str(tmp_path / "runs" / "nightly-*"), "--out", str(out)]
    code, text = history(
        [
            *argv,
            "--cache",
            str(tmp_path / "c.duckdb"),
            "--fail-on-regression",
            str(NIGHTS - STEP_AT + 1),
            "--absolute",
        ],
        capsys,
    )
    assert code == 1, text
    assert "history: FAIL" in text and "regressed" in text
    assert "95 % from" in text  # each change point's range of runs (changepoint_where)
    assert "history: absolute (--absolute): each case judged on its own level" in text
    points = read_csv(out)
    cases = resolvable(points)
    assert len(cases) >= 20  # this machine's quieter rows
    marked = points[(points["metric"] == "time_us_min") & (points["change_point"] == "regressed")]
    found = {
        c
        for c in cases
        if any(abs(i - STEP_AT) <= 1 for i in marked[marked["case"] == c]["run_index"])
    }
    assert len(found) >= 0.85 * len(cases), (len(found), len(cases))
    # each change point names its run; before -> after is about +20 % (median over the cases)
    lines = [
        row
        for row in text.splitlines()
        if "time_us_min" in row
        and any(f"nightly-00{n}" in row for n in (STEP_AT - 1, STEP_AT, STEP_AT + 1))
    ]
    changes = sorted(float(row.split("%")[0].split()[-1]) for row in lines)
    assert 15 < changes[len(changes) // 2] < 25, changes
    # only the recent window gates: a step 20 nights back is older than the last 5 runs
    code, text = history(
        [*argv, "--cache", "off", "--fail-on-regression", "5", "--absolute"], capsys
    )
    recent = points[(points["change_point"] == "regressed") & (points["run_index"] >= NIGHTS - 5)]
    assert code == (1 if len(recent) else 0), text
    assert ("history: no case regressed within the last 5 run(s)" in text) == recent.empty
    assert "pass" not in text.lower().split("history: ")[-1]
    html = (out / "history.html").read_text()
    assert html.count("<figure>") == 108 and "<svg" in html and "2026-02-10 0000028" in html
    assert (out / "history.md").read_text().startswith("# distbench history")
    # relative (the default): one change, the whole run's, at its night and about +20 %
    code, text = history([*argv, "--cache", "off", "--fail-on-regression", "25"], capsys)
    assert code == 1, text
    assert "history: relative: each case judged beyond the rest of its run" in text
    whole = [row for row in text.splitlines() if "whole run (comm)" in row and "%" in row]
    assert any(f"regressed: whole run (comm) (from nightly-00{STEP_AT}" in row for row in whole)
    step = next(row for row in whole if f"nightly-00{STEP_AT}" in row and "time_us_min" in row)
    assert 15 < float(step.split("%")[0].split()[-1]) < 25, step
    assert "whole run (comm)" in (out / "history.md").read_text()
    page = (out / "history.html").read_text()
    assert page.count("<figure>") == 109 and "whole run (comm): what moved every" in page
    cases_changed = set(read_csv(out).query("change_point != ''")["case"])
    assert len(cases_changed) <= 5, cases_changed  # beyond the run nothing stepped


def test_one_primitive_slower_is_seen_beyond_the_rest_of_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """all_reduce and broadcast 20 % slower from night 40, the other five primitives not: in
    relative mode their cases are found, the whole run does not move, and the cases of the
    primitives that did not slow are not named improved on that night (the level holds)."""
    stepped = frozenset({"all_reduce", "broadcast"})
    bench_history().build_history(tmp_path / "runs", NIGHTS, 108, STEP_AT, seed=4, stepped=stepped)
    out = tmp_path / "h"
    code, text = history(
        ["--glob", str(tmp_path / "runs" / "nightly-*"), "--out", str(out), "--cache", "off"],
        capsys,
    )
    assert code == 0, text
    points = read_csv(out)
    marked = points[(points["metric"] == "time_us_min") & (points["change_point"] != "")]
    hit = marked[(marked["run_index"] - STEP_AT).abs() <= 1]
    slowed = [c for c in resolvable(points) if c.split()[0] in stepped]
    assert len(slowed) >= 6, slowed
    found = set(hit[hit["change_point"] == "regressed"]["case"])
    assert len(found & set(slowed)) >= 0.8 * len(slowed), (sorted(found), slowed)
    # the others do not read faster on that night (a change point of theirs elsewhere is the
    # data's own: --absolute finds the same two in these nights)
    others = marked[~marked["case"].str.split().str[0].isin(stepped)]
    assert len(others) <= 3 and ((others["run_index"] - STEP_AT).abs() > 3).all(), others
    assert not any("whole run (comm)" in row and "%" in row for row in text.splitlines())


def test_pure_noise_has_no_change_point_at_the_defaults(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench_history().build_history(tmp_path / "runs", NIGHTS, 108, None, seed=5)
    code, text = history(
        [
            "--glob",
            str(tmp_path / "runs" / "nightly-*"),
            "--out",
            str(tmp_path / "h"),
            "--cache",
            "off",
            "--fail-on-regression",
            str(NIGHTS),
        ],
        capsys,
    )
    assert code == 0, text
    assert "0 change point(s)" in text
    assert (read_csv(tmp_path / "h")["change_point"] == "").all()
    drift = next(line for line in text.splitlines() if line.startswith("history: drift: "))
    assert (
        "series" in drift
        and drift.removeprefix("history: ") in (tmp_path / "h" / "history.md").read_text()
    )


def test_a_gradual_drift_is_reported_as_steps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """+1 % a night for 60 nights (x1.8): no single step, yet --absolute reports the trend as
    one or more regressing change points on most resolvable cases (docs/history.md)."""
    module = bench_history()
    runs = tmp_path / "runs"
    module.build_history(runs, NIGHTS, 108, None, seed=9)
    for night, run_dir in enumerate(sorted(runs.iterdir())):
        frame = pd.read_csv(run_dir / "results.csv", dtype=str, keep_default_na=False)
        factor = 1.01**night
        for column in ("time_us_p50", "time_us_mean", "time_us_min", "time_us_max"):
            frame[column] = (frame[column].astype(float) * factor).map(repr)
        for column in ("algbw_GBps", "busbw_GBps"):
            frame[column] = (frame[column].astype(float) / factor).map(repr)
        frame.to_csv(run_dir / "results.csv", index=False, lineterminator="\n")
    argv = ["--glob", str(runs / "nightly-*"), "--out", str(tmp_path / "h"), "--cache", "off"]
    code, _ = history([*argv, "--absolute"], capsys)
    assert code == 0
    points = read_csv(tmp_path / "h")
    marked = points[(points["metric"] == "time_us_min") & (points["change_point"] != "")]
    cases = [c for c in resolvable(points) if c in set(points["case"])]
    assert set(marked["change_point"]) == {"regressed"}
    assert marked["case"].nunique() >= 0.8 * len(cases)
    # relative: beyond the run the cases hardly move; the trend is the whole run's, judged at
    # its own drift, which a steady trend is: no step is seen there (a limit, docs/history.md)
    code, _text = history(argv, capsys)
    assert code == 0
    assert read_csv(tmp_path / "h")["change_point"].ne("").sum() <= 5
    table = (tmp_path / "h" / "history.md").read_text()
    whole = next(row for row in table.splitlines() if row.startswith("| whole run (comm)"))
    # what it would catch is simulated at the whole run's strong drift: here nothing below 10x,
    # so it cannot tell (a verdict that could not fail is no pass)
    assert "cannot tell" in whole and "would catch nothing below 10x" in whole, whole
    moved = float(whole.split("its level moved ")[1].split(" %")[0])  # but it says how far
    assert 50 < moved < 110, whole  # x1.01 a night: about +69 %, first 7 nights to last 7


def test_frozen_v1_runs_load_and_a_changed_meaning_cuts_the_series(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = history(
        [
            str(DATA / "cluster-a"),
            str(DATA / "cluster-b"),
            "--out",
            str(tmp_path / "v1"),
            "--cache",
            "off",
        ],
        capsys,
    )
    assert code == 0, text
    frame = read_csv(tmp_path / "v1")
    assert set(frame["run"]) == {"cluster-a", "cluster-b"} and set(frame["schema_version"]) == {1}
    assert set(frame["metric"]) == {"time_us_min", "step_time_us_min"}  # one series per case
    # two nights cannot show a change: every case says so, none passes
    assert "0 no change seen, 92 cannot tell" in text  # 91 cases and the whole run (comm)
    assert "ddp: each case on its own level (fewer than 4 primitives" in text
    assert "too few nights: 2 of 6" in text

    # DDP step times changed meaning in v2 (timed windows, not a per-step maximum)
    upgraded_copy(DATA / "cluster-a" / "ddp", tmp_path / "new", "2027-01-01T00:00:00Z")
    shutil.copytree(DATA / "cluster-a" / "ddp", tmp_path / "old")
    code, text = history(
        [
            str(tmp_path / "old"),
            str(tmp_path / "new"),
            "--out",
            str(tmp_path / "h"),
            "--cache",
            "off",
        ],
        capsys,
    )
    assert code == 0
    assert "step_time_us_min series cut at run new: definition changed in v2" in text
    frame = read_csv(tmp_path / "h")
    assert frame.groupby("metric")["segment"].max()["step_time_us_min"] == 1


def test_the_cache_reads_a_run_again_when_it_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    bench_history().build_history(runs, 8, 4, None, seed=1)
    argv = [
        "--glob",
        str(runs / "nightly-*"),
        "--out",
        str(tmp_path / "h"),
        "--cache",
        str(tmp_path / "c.duckdb"),
    ]
    assert history(argv, capsys)[0] == 0
    first = read_csv(tmp_path / "h")
    results = runs / "nightly-0007" / "results.csv"
    frame = pd.read_csv(results, dtype=str, keep_default_na=False)
    frame["time_us_min"] = "12345.0"
    frame.to_csv(results, index=False, lineterminator="\n")
    assert history(argv, capsys)[0] == 0
    second = read_csv(tmp_path / "h")
    last = second[(second["run"] == "nightly-0007") & (second["metric"] == "time_us_min")]
    assert (last["value"] == 12345.0).all()
    assert len(first) == len(second)
