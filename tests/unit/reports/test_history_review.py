"""A new user's week with `distbench history` (reports/history/verdict.py, build.py, load.py,
render.py): a case that could see no step says cannot tell, a change older than the verdicts'
runs is named in its verdict, the same run named twice and an --out that cannot be written are
one line and exit 2, a night still running is not told to resume, and the words are plural where
they count. The half that reads many synthetic nights: tests/integration/reports/
test_history_review.py."""

from __future__ import annotations

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
