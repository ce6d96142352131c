"""A new user's week with `distbench history` (reports/history/verdict.py, build.py, load.py,
render.py): a case that could see no step says cannot tell, a change older than the verdicts'
runs is named in its verdict, the same run named twice and an --out that cannot be written are
one line and exit 2, a night still running is not told to resume, and the words are plural where
they count. The half that reads many synthetic nights: tests/integration/reports/
test_history_review.py."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from distbench.reports.history.detect import Series, judge_series, whole_run_case
from distbench.reports.history.load import RunInfo
from tests.conftest import usage_error_line
from tests.paths import DATA


def nights(n: int) -> list[RunInfo]:
    return [
        RunInfo(f"/r{i}", f"nightly-{i:04d}", f"2026-01-{i + 1:02d}", "abc", 4) for i in range(n)
    ]


def test_a_case_that_could_see_no_step_cannot_tell() -> None:
    """108 unchanged cases of 12 nights in one family: no step below 10x would be found 3 or 7
    nights after it (ranks, and the level a case joins 108 at). Before: 'no change seen (would
    catch nothing below 10x ...)', a pass that could not have failed."""
    from distbench.reports.history.verdict import verdict

    rng = np.random.default_rng(7)
    series = [
        Series(f"all_reduce {i}", "comm", "time_us_min", 0, np.arange(12),
               np.exp(0.05 * rng.standard_normal(12)), 0.0)
        for i in range(108)
    ]  # fmt: skip
    judged = judge_series(series)
    said = [verdict(s, j, nights(12), 7, 0.05) for s, j in zip(series, judged, strict=True)]
    blind = [v for v in said if not v.reason.startswith("from ")]
    assert len(blind) >= 100
    for v in blind:
        assert v.state == "cannot tell", v
        assert v.reason == (
            "12 nights are too few to see any step: would catch nothing below 10x after 3 "
            "nights, nor after 7"
        ), v.reason


def test_a_change_older_than_the_verdicts_runs_is_named() -> None:
    """A 50 % step at night 8 of 20: the change table lists it; the verdict over the last 7
    runs is not about it, and says so."""
    from distbench.reports.history.verdict import verdict

    rng = np.random.default_rng(1)
    rng.standard_normal(12)
    y = np.exp(0.03 * rng.standard_normal(20) + np.log(1.5) * (np.arange(20) >= 8))
    case = Series("all_reduce 1M", "comm", "time_us_min", 0, np.arange(20), y, 0.0, "all_reduce")
    judged = judge_series([case])[0]
    assert [f.index for f in judged.found] == [8]
    seen = verdict(case, judged, nights(20), 7, 0.05)
    assert seen.state == "no change seen" and seen.older, seen
    assert seen.reason.startswith("before the last 7 runs: regressed +51 % from nightly-0008; ")
    recent = verdict(case, judged, nights(20), 12, 0.05)
    assert (recent.state, recent.older) == ("regressed", False)


def test_a_trend_over_one_night_each_side_reads_singular() -> None:
    from distbench.reports.history.verdict import trend_text

    whole = Series(whole_run_case("comm"), "comm", "time_us_min", 0, np.arange(2),
                   np.array([1.0, 1.5]), 0.0)  # fmt: skip
    assert trend_text(whole, 7, 0.05) == (
        "; its level moved +50 % from its first night to its last night"
    )


def test_the_html_says_each_tables_title_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from distbench.cli.app import run_cli

    out = tmp_path / "h"
    argv = [str(DATA / "cluster-a"), str(DATA / "cluster-b"), "--out", str(out), "--cache", "off"]
    assert run_cli(["history", *argv]) == 0
    capsys.readouterr()
    page = (out / "history.html").read_text()
    assert page.count("Verdicts over the last 2 runs") == 1, page.count("Verdicts over")
    assert "<caption></caption>" not in page


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["RUN", "RUN"], "RUN was named 2 times, one run; give RUN_DIR... (two nights or more)"),
        (["--out", "FILE/sub"], "--out FILE/sub: FILE is a file, not a folder"),
        (["--out", "HOLDS"], "is a folder, where history writes its file history.md"),
        (["--out", "/proc/distbench-history"], "cannot write"),
    ],
)
def test_bad_runs_and_outs_are_one_line_and_exit_2(
    argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the same run twice said 'of 1, 0 did not: ' (an empty list); an --out under a
    file raised NotADirectoryError (a traceback and exit 1, history's 'regressed')."""
    (tmp_path / "FILE").write_text("")
    (tmp_path / "HOLDS" / "history.md").mkdir(parents=True)
    names = {"RUN": str(DATA / "cluster-a"), "FILE": str(tmp_path / "FILE"),
             "HOLDS": str(tmp_path / "HOLDS")}  # fmt: skip

    def named(arg: str) -> str:
        head, _, tail = arg.partition("/")
        return "/".join([names.get(head, head), tail]) if tail else names.get(arg, arg)

    full = ["history", *(named(a) for a in argv), "--cache", "off"]
    if argv[0] != "RUN":
        full[1:1] = [str(DATA / "cluster-a"), str(DATA / "cluster-b")]
    else:
        full += ["--out", str(tmp_path / "h")]
    line = usage_error_line(full, capsys)
    for name, path in names.items():
        line = line.replace(path, name)
    assert says in line, line


def test_a_night_still_running_is_not_told_to_resume(tmp_path: Path) -> None:
    """ci/nightly.sh marks a night of several launches partial from its start; a launch's
    manifest says running until it ends. Before, such a night read 'partial night:
    ci/nightly.sh --resume RUN finishes it', a second sweep on a running night."""
    from distbench.collectors.rundir import NIGHT_STATE
    from distbench.reports.history.load import incomplete_reason

    def night(name: str, state: str, statuses: list[str]) -> Path:
        path = tmp_path / name
        for k, status in enumerate(statuses, 1):
            (path / f"launch-{k}").mkdir(parents=True)
            manifest = {"status": status, "host": "node7"}
            (path / f"launch-{k}" / "manifest.json").write_text(json.dumps(manifest))
        (path / NIGHT_STATE).write_text(f"status={state}\nlaunches=3\nresumed=0\n")
        return path

    running = night("running", "partial", ["completed", "running"])
    assert incomplete_reason(running) == (
        "status running in launch-2: still running, or killed before it could say so; let it "
        f"finish, and only if no sweep runs there any more on node7, ci/nightly.sh --resume "
        f"{running} finishes it"
    )
    cut = night("cut", "partial", ["completed", "interrupted"])
    assert incomplete_reason(cut) == (
        f"cut short, status interrupted in launch-2: ci/nightly.sh --resume {cut} finishes it"
    )
    between = night("between", "partial", ["completed"])
    assert "ci/nightly.sh is between two launches, or was stopped there" in str(
        incomplete_reason(between)
    )
    assert incomplete_reason(night("done", "complete", ["completed"] * 3)) is None


def test_runs_of_one_date_are_told_apart_on_the_axis_by_their_time() -> None:
    """Several nights of one day (or a revision measured again) read alike as date and sha."""
    from distbench.reports.history.figures import axis_labels
    from distbench.reports.history.load import RunInfo

    def run(start: str, sha: str = "02235a9ff") -> RunInfo:
        return RunInfo(path=start, name=start, started_utc=start, git_sha=sha, schema_version=4)

    apart = [run("2026-11-29T02:00:00Z"), run("2026-11-30T02:00:00Z")]
    assert axis_labels(apart) == ["2026-11-29 02235a9", "2026-11-30 02235a9"]
    same_day = [run("2026-12-05T13:15:41Z"), run("2026-12-05T13:18:02Z", "")]
    assert axis_labels(same_day) == ["2026-12-05 13:15 02235a9", "2026-12-05 13:18 ?"]


def test_the_drift_line_gives_the_reason_that_applied_and_trends_name_a_panel_drawn() -> None:
    """A new user's history of 6 series read 'fewer than 8 series of one length, phi that
    differ, or one drift they share' for the one reason that held (6 < 8), and an absolute
    history's Trends text described a whole-run panel it did not draw."""
    import numpy as np

    from distbench.reports.history.lines import drift_line
    from distbench.reports.history.render import trend_text
    from distbench.stats.changepoint import detect_changes

    rng = np.random.default_rng(3)
    few = detect_changes(list(rng.normal(0, 0.05, (6, 20))), [0.0] * 6)
    line = drift_line(few)
    assert line.startswith("drift: 6 judged each at its own phi") and line.endswith(
        "fewer than 8 series to pool"
    ), line
    many = detect_changes(list(rng.normal(0, 0.05, (9, 20))), [0.0] * 9)
    assert "series to pool" not in drift_line(many)
    assert "first panel is the whole run" in trend_text("min", whole_run=True)
    absolute = trend_text("min", whole_run=False)
    assert "whole run" not in absolute and absolute.endswith("definition changed.")
