"""The report's verdicts and speedup intervals come from compare's own comparison (#25 item 6,
reports/report/verdicts.py). The half that launches or runs for seconds; the in-process half, and
the file's whole story: tests/unit/reports/test_report_uncertainty.py."""

from __future__ import annotations

import math
import random
import shutil
from pathlib import Path

import pytest

from distbench.reports.load import load_runs
from distbench.reports.report import speedups as sp
from distbench.reports.report.launch_frames import pool_launches
from distbench.reports.report.page.build import build_report
from distbench.stats.verdict import CANNOT_TELL, IMPROVED, NO_CHANGE, REGRESSED
from tests.paths import DATA
from tests.unit.reports.test_compare import launch, levels, night, window
from tests.unit.reports.test_report_uncertainty import (
    assert_report_equals_compare,
    report_rows,
)

# ---- a real slowdown, several launches a side ---------------------------------------------------


@pytest.fixture(scope="module")
def slowdown(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A baseline window of 6 nights of 2 launches (2 % between launches) and a night of 2
    launches whose all_reduce is 25 % slower at every size; the other primitives unchanged.
    (Four primitives: compare judges each beyond the rest of the run, the launch's common level
    being the median over the other primitives' rows; with two, one slower reads as the other
    faster beyond the rest.)"""
    base = tmp_path_factory.mktemp("slowdown")
    rng = random.Random(5)
    table = levels("all_reduce", "broadcast", "all_gather", "reduce")
    store = window(base, rng, 6, table)
    table = {key: value * (1.25 if key[0] == "all_reduce" else 1.0) for key, value in table.items()}
    return store, night(base / "tonight", table, rng)


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


# ---- a box compared with itself ---------------------------------------------------------------


def test_a_box_against_itself_with_5_percent_between_launches_is_never_called_slower(
    tmp_path: Path,
) -> None:
    """0.2.0 called such pairs slower (0.86-0.98x) in 17 of 30 reports: its interval saw the
    trials of one launch only. Ten pairs of single launches of one box, each launch shifted by a
    draw of 5 % (sd): no row is regressed or improved, every interval holds 1."""
    table = levels("all_reduce", "broadcast")
    for seed in range(10):
        rng = random.Random(seed)
        a = launch(tmp_path / f"a{seed}" / "box", table, rng, spread=0.05)
        b = launch(tmp_path / f"b{seed}" / "box-again", table, rng, spread=0.05)
        rows, _verdicts = report_rows([a, b])
        assert set(rows["state"]) == {CANNOT_TELL}, rows[["primitive", "size_bytes", "verdict"]]
        assert ((rows["low"] <= 1) & (rows["high"] >= 1)).all()
        assert rows["verdict"].str.startswith("cannot tell: learning the noise").all()


def test_one_launch_a_source_says_cluster_and_launch_cannot_be_told_apart(tmp_path: Path) -> None:
    rng = random.Random(11)
    table = levels("all_reduce", "broadcast")
    a = launch(tmp_path / "cluster-a", table, rng, spread=0.05)
    b = launch(tmp_path / "cluster-b", table, rng, spread=0.05)
    files = build_report([str(a), str(b)], str(tmp_path / "report"))
    lead = files.markdown.read_text(encoding="utf-8").split("\n\n")[1]
    assert lead.startswith(
        "cluster-a and cluster-b are one launch each: a difference between them cannot be told "
        "apart from the difference between two launches of one box. The verdicts, on each row's "
        "time_us_p50, assume the "
        "stated default spread between launches"
    ), lead
    assert "slower" not in lead.replace("regressed (slower)", "") and "faster" not in lead
    assert "Against cluster-a, no row or band of cluster-b is past the noise" in lead
    assert "6 cannot tell" in lead
    html = files.html.read_text(encoding="utf-8")
    assert "cannot tell: learning the noise: 1 of 5 nights" in html  # the per-size table


def test_the_frozen_fixtures_headline_no_noise_row_as_slower(tmp_path: Path) -> None:
    """tests/data/cluster-a and -b: one box twice, noise only. 0.2.0 headlined broadcast 1M at
    3 ranks as slower (0.093-0.55x)."""
    files = build_report([str(DATA / "cluster-a"), str(DATA / "cluster-b")], str(tmp_path / "r"))
    lead = files.markdown.read_text(encoding="utf-8").split("\n\n")[1]
    assert "cannot be told apart from the difference between two launches" in lead, lead
    assert "regressed" not in lead.split("cannot tell", 1)[0].split("one box")[1], lead
    assert "(slower)" not in lead and "(faster)" not in lead
    markdown = files.markdown.read_text(encoding="utf-8")
    assert "| sizes improved / regressed | min\u2013max |" in markdown
    assert "every size: geo. mean [interval]" in markdown


def test_a_real_25_percent_slowdown_with_several_launches_a_side_is_called_slower(
    slowdown: tuple[Path, Path], tmp_path: Path
) -> None:
    store, tonight = slowdown
    rows, _verdicts = report_rows([store, tonight])
    slow, same = rows[rows["primitive"] == "all_reduce"], rows[rows["primitive"] != "all_reduce"]
    assert (slow["state"] == REGRESSED).all(), slow[["size_bytes", "verdict"]]
    assert (slow["verdict"] == "regressed (slower)").all()
    assert ((slow["low"] <= 0.8) & (slow["high"] >= 0.8)).all()  # speedup 1 / 1.25
    assert (slow["high"] < 1).all()
    assert (same["state"] == NO_CHANGE).all(), same[["size_bytes", "verdict"]]
    assert same["verdict"].str.match(r"no change seen \(would catch >= \d+ %\)").all()
    assert set(rows["launches"]) == {2} and set(rows["launches_base"]) == {12}
    files = build_report([str(store), str(tonight)], str(tmp_path / "report"))
    lead = files.markdown.read_text(encoding="utf-8").split("\n\n")[1]
    assert "Against nightly, tonight is regressed (slower) for all_reduce" in lead, lead
    assert "the spread between launches of nightly's baseline window (6 nights" in lead
    # the metric it judged, as the nightly gate judges another (a new user saw them disagree)
    assert "launch by launch on each row's time_us_p50 (`distbench compare`'s default" in lead
    # report --metric min judges as the nightly gate does, and names it
    files = build_report([str(store), str(tonight)], str(tmp_path / "min"), metric="min")
    text = files.markdown.read_text(encoding="utf-8")
    assert "on each row's time_us_min (report --metric, as a gate run" in text
    assert "Against nightly, tonight is regressed (slower) for all_reduce" in text
    assert "| nightly step min µs |" not in text and "baseline min time / min time" in text


def test_report_equals_compare_on_launches_nights_and_windows(
    slowdown: tuple[Path, Path], tmp_path: Path
) -> None:
    store, tonight = slowdown
    common = assert_report_equals_compare(store, tonight)
    assert {REGRESSED, NO_CHANGE} <= set(common["state"])
    common = assert_report_equals_compare(store, tonight, "min")  # report --metric min
    assert {REGRESSED, NO_CHANGE} <= set(common["state"])
    one = tonight / "launch-1"  # a single launch against the window
    common = assert_report_equals_compare(store, one)
    assert REGRESSED in set(common["state"])
    assert_report_equals_compare(tonight / "launch-2", store / "nights" / "n00")  # two nights
    rng = random.Random(9)
    two = {k: v * (1.25 if k[0] == "all_reduce" else 1.0) for k, v in levels("all_reduce",
           "broadcast").items()}  # fmt: skip
    common = assert_report_equals_compare(store, night(tmp_path / "two", two, rng))
    # Two primitives are too few for relative mode (it needs four since 6f51168: with two, one
    # slower made the other read improved by as much): broadcast is judged on its own level.
    beyond = common[common["primitive"] == "broadcast"]
    assert set(beyond["state"]) == {NO_CHANGE}, beyond[["size_bytes", "verdict"]]
    faster = launch(tmp_path / "fast", levels("all_reduce", scale=0.1), rng)
    common = assert_report_equals_compare(tonight / "launch-1", faster)
    assert IMPROVED in set(common["state"])


def test_report_equals_compare_on_the_frozen_fixtures() -> None:
    common = assert_report_equals_compare(DATA / "cluster-a", DATA / "cluster-b")
    assert len(common) == 91 and set(common["state"]) == {CANNOT_TELL}


# ---- the summary per case -------------------------------------------------------------------


def test_every_size_is_the_geometric_mean_over_every_size_not_the_called_ones(
    tmp_path: Path,
) -> None:
    """broadcast 40 % slower at 1M only: its case's "every size" speedup is the mean over its
    three sizes (1 / 1.4 ** (1/3) = 0.89), not over the one called size (0.71, 0.2.0)."""
    rng = random.Random(21)
    table = levels("all_reduce", "broadcast")
    store = window(tmp_path, rng, 6, table)
    slower = {k: v * (1.4 if k == ("broadcast", 1 << 20) else 1.0) for k, v in table.items()}
    tonight = night(tmp_path / "tonight", slower, rng)
    rows, verdicts = report_rows([store, tonight])
    broadcast = rows[rows["primitive"] == "broadcast"]
    assert list(broadcast.sort_values("size_bytes")["state"]) == [NO_CHANGE] * 2 + [REGRESSED]
    summary = sp.ratio_summary(rows, verdicts).set_index("primitive").loc["broadcast"]
    every = math.exp(broadcast["speedup"].map(math.log).mean())
    assert summary["speedup_geomean"] == pytest.approx(every, rel=1e-6)
    assert summary["speedup_geomean"] == pytest.approx(1.4 ** (-1 / 3), abs=0.03)
    assert summary["geomean_low"] < every < summary["geomean_high"]
    assert (summary["regressed"], summary["improved"]) == (1, 0)


# ---- a night in the figures and tables ------------------------------------------------------


def test_a_nights_launches_are_one_line_in_the_figures_and_apart_in_the_verdicts(
    tmp_path: Path,
) -> None:
    """The figures and tables draw a night of launches as one run (each case's p50 the geometric
    mean of its launches', a note says so); the verdicts judge its launches one by one, and the
    per-size table's p50s are the same geometric means."""
    rng = random.Random(31)
    table = levels("all_reduce", "broadcast")
    one = night(tmp_path / "monday", table, rng, launches=3)
    two = night(tmp_path / "tuesday", table, rng, launches=2)
    loaded = load_runs([one, two])
    pool_launches(loaded)
    assert sorted(run.name for run in loaded.runs) == ["monday", "tuesday"]
    assert any("monday: 3 launches drawn as one run" in note for note in loaded.notes)
    size = 1 << 20
    p50s = [
        load_runs([one / f"launch-{n}"]).comm.set_index(["primitive", "size_bytes"])
        .loc[("all_reduce", size), "time_us_p50"]
        for n in (1, 2, 3)
    ]  # fmt: skip
    drawn = loaded.comm.set_index(["run", "primitive", "size_bytes"])
    geometric = math.exp(sum(math.log(p) for p in p50s) / 3)
    assert drawn.loc[("monday", "all_reduce", size), "time_us_p50"] == pytest.approx(geometric)
    rows, _verdicts = report_rows([one, two])
    row = rows.set_index(["primitive", "size_bytes"]).loc[("all_reduce", size)]
    assert (row["launches_base"], row["launches"]) == (3, 2)
    assert row["time_us_p50_base"] == pytest.approx(geometric)
