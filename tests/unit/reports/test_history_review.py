"""A new user's week with `distbench history` (reports/history/verdict.py, build.py, load.py,
render.py): a case that could see no step says cannot tell, a change older than the verdicts'
runs is named in its verdict, the same run named twice and an --out that cannot be written are
one line and exit 2, a night still running is not told to resume, and the words are plural where
they count. The half that reads many synthetic nights: tests/integration/reports/
test_history_review.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import usage_error_line
from tests.paths import DATA


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
