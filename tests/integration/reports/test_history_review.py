"""A new user's week with `distbench history`, on synthetic nights of this machine's launches
(ci/bench_history.py): a step at 6 + 6 nights that history cannot see says so in every output,
and an older change is named by the verdict the terminal prints. The pure half:
tests/unit/reports/test_history_review.py."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.unit.reports.test_history import bench_history, history


def slower(runs: Path, first: int, factor: float, primitive: str | None = None) -> None:
    """Every row (or `primitive`'s) `factor` x slower from night `first` on."""
    for night, run_dir in enumerate(sorted(runs.iterdir())):
        if night < first:
            continue
        frame = pd.read_csv(run_dir / "results.csv", dtype=str, keep_default_na=False)
        rows = frame["primitive"] == primitive if primitive else frame["primitive"] != ""
        for column in ("time_us_p50", "time_us_mean", "time_us_min", "time_us_max"):
            frame.loc[rows, column] = (frame.loc[rows, column].astype(float) * factor).map(repr)
        frame.to_csv(run_dir / "results.csv", index=False, lineterminator="\n")


def test_twelve_nights_that_show_no_step_cannot_tell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """6 nights, then 6 at 1.5x (the user's history, seed 3): the whole run's step is not found
    (judged alone, at its own drift, 12 nights show no step below 10x), and no case could see
    one either. Before: '0 change points ... 109 no change seen (would catch nothing after 3
    nights)'. Now every output says cannot tell, and the summary counts them there."""
    runs = tmp_path / "runs"
    bench_history().build_history(runs, 12, 108, None, seed=3)
    slower(runs, 6, 1.5)
    out = tmp_path / "h"
    code, text = history(["--glob", str(runs / "nightly-*"), "--out", str(out), "--cache", "off"],
                         capsys)  # fmt: skip
    assert code == 0, text
    summary = text.splitlines()[0]
    assert "0 no change seen" in summary and "would catch nothing" not in summary, summary
    blind = "12 nights are too few to see any step: would catch nothing below 10x after 3 nights"
    whole = next(line for line in text.splitlines() if "cannot tell: whole run (comm)" in line)
    assert blind in whole and "its level moved +51 %" in whole, whole
    markdown = (out / "history.md").read_text()
    assert f"| whole run (comm) | time_us_min | cannot tell | {blind}" in markdown
    assert "| no change seen |" not in markdown
    assert blind in (out / "history.html").read_text()
    points = pd.read_csv(out / "history.csv", keep_default_na=False)
    said = dict(zip(points["case"], points["verdict"], strict=False))
    assert set(said.values()) <= {"cannot tell", "regressed", "improved"}, set(said.values())


def test_an_older_change_is_named_by_its_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """all_reduce 1.5x slower from night 10 of 20: the change table lists its rows regressed,
    the summary (over the last 7 runs) counts none regressed, and each such verdict says why:
    its change is before the last 7 runs. Before: 'no change seen' beside '+48 % regressed'."""
    runs = tmp_path / "runs"
    bench_history().build_history(runs, 20, 108, None, seed=3)
    slower(runs, 10, 1.5, "all_reduce")
    code, text = history(["--glob", str(runs / "nightly-*"), "--out", str(tmp_path / "h"),
                          "--cache", "off"], capsys)  # fmt: skip
    assert code == 0, text
    assert "over the last 7 runs" in text.splitlines()[0]
    table = [row for row in text.splitlines() if " regressed " in row and "all_reduce" in row]
    assert table, text
    named = [row for row in text.splitlines() if "before the last 7 runs: regressed +" in row]
    assert named and all("from nightly-0010" in row or "cases (" in row for row in named), named
    markdown = (tmp_path / "h" / "history.md").read_text()
    assert "before the last 7 runs: regressed +" in markdown
