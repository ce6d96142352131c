"""One table per primitive and world size in a run's output (issue #26 item 6: a nightly's tables
for one primitive were split under repeated headers).

The cause: the progress display reads the ranks' begin lines before the rows (so that no row is
missed), and a poll whose begin lines still held the begin of the measurement whose row it then
read (the last all_reduce) took that begin for "the next primitive began" once the first
send_recv row was held back, and printed that one row as a table of its own. Replayed here in
process with the two files written in the order the ranks write them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from distbench.collectors.rundir import progress_path
from distbench.launch.progress import RunProgress

HEADER = "measurement,primitive\n"


def render(rows: Sequence[dict[str, str]]) -> str:
    return f"TABLE {rows[0]['primitive']}: " + " ".join(r["measurement"] for r in rows)


def begin(measurement: str, primitive: str) -> str:
    return f"1.0 begin {measurement} {primitive} float32 throughput size=1024\n"


def run_files(run_dir: Path, log_text: str = "") -> Path:
    """A run directory's results.csv (its header) and world size 2's progress log, as the ranks
    start them; the log's path."""
    (run_dir / "results.csv").write_text(HEADER)
    log = progress_path(run_dir, 2)
    log.parent.mkdir()
    log.write_text(log_text)
    return log


def test_a_begin_already_finished_does_not_split_the_next_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = run_files(tmp_path)
    progress = RunProgress(tmp_path, render, 6, [], "quiet")
    progress.start_launch(2, [2], 6)

    def append(path: Path, text: str) -> None:
        with open(path, "a") as handle:
            handle.write(text)

    # the ranks: begin i0, row i0, begin i1 (all_reduce), row i1, begin i2 (send_recv) ...
    append(log, begin("ws2/i0", "all_reduce"))
    append(tmp_path / "results.csv", "ws2/i0,all_reduce\n")
    progress.poll()
    # one poll reads begin i1 (all_reduce) and i2, i3 (send_recv), then rows i1 and i2
    append(log, begin("ws2/i1", "all_reduce") + begin("ws2/i2", "send_recv"))
    append(log, begin("ws2/i3", "send_recv"))
    append(tmp_path / "results.csv", "ws2/i1,all_reduce\nws2/i2,send_recv\n")
    progress.poll()
    append(log, begin("ws2/i4", "send_recv") + begin("ws2/i5", "send_recv"))
    append(tmp_path / "results.csv", "ws2/i3,send_recv\nws2/i4,send_recv\nws2/i5,send_recv\n")
    progress.end_launch()
    tables = [line for line in capsys.readouterr().out.splitlines() if line.startswith("TABLE")]
    assert tables == [
        "TABLE all_reduce: ws2/i0 ws2/i1",
        "TABLE send_recv: ws2/i2 ws2/i3 ws2/i4 ws2/i5",
    ]


def test_rows_past_the_plan_are_shown_not_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pairs run whose outlier was confirmed writes rows past its plan (ws2/i2 of a plan of 2):
    the counter counts the planned rows only ([2/2], never [3/2]) and names the extra one."""
    run_files(tmp_path)
    planned = {"ws2/i0", "ws2/i1"}.__contains__
    progress = RunProgress(tmp_path, render, 2, [], "lines", is_planned=planned)
    progress.start_launch(2, [2], 2)
    with open(tmp_path / "results.csv", "a") as handle:
        handle.write("ws2/i0,pairs\nws2/i2,pairs\nws2/i1,pairs\n")
    progress.poll()
    progress.end_launch()
    err = capsys.readouterr().err
    assert "[1/2] done" in err and "[2/2] done" in err, err
    assert "(ws2/i2: beyond the plan, measured again)" in err
    assert "[3/" not in err and "/3]" not in err and progress.done == 2
    resumed = RunProgress(tmp_path, render, 2, [{"measurement": "ws2/i2"}], "quiet", [], planned)
    assert resumed.done == 0  # a kept extra row is no planned row kept


def round_line(number: int, of: int, measurements: int, unix_s: float) -> str:
    return f"{unix_s:.3f} round {number} of {of} over {measurements} measurements\n"


def test_interleaved_rounds_are_shown_before_any_row_lands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--order interleaved lands every row in its last round: until then the rounds are the
    progress, a line each (at most one per RUNNING_NOTE_S) with an ETA from the rounds' mean."""
    log = run_files(tmp_path)
    progress = RunProgress(tmp_path, render, 9, [], "lines")
    progress.start_launch(2, [2], 9)
    with open(log, "a") as handle:  # rounds 1 and 2 begun 4 s apart: 6 more rounds, ~24 s
        handle.write(round_line(1, 8, 9, 1000.0) + round_line(2, 8, 9, 1004.0))
    progress.poll()
    err = capsys.readouterr().err
    assert "[0/9] round 2/8 of trials over 9 measurements" in err, err
    assert "ETA ~0:28" in err  # 7 rounds left (this one too) x 4 s
    with open(log, "a") as handle:
        handle.write(round_line(3, 8, 9, 1008.0))
    progress.poll()
    assert capsys.readouterr().err == ""  # within RUNNING_NOTE_S of the line before
    monkeypatch.setattr(progress, "last_line", 0.0)
    with open(log, "a") as handle:
        handle.write(round_line(4, 8, 9, 1012.0))
    progress.poll()
    assert "round 4/8" in capsys.readouterr().err


def test_grouped_rounds_give_no_eta_of_their_own(tmp_path: Path) -> None:
    """Grouped rounds hold 3 of the launch's measurements: their end is not the launch's."""
    log = run_files(tmp_path, round_line(1, 5, 3, 1000.0) + round_line(2, 5, 3, 1001.0))
    progress = RunProgress(tmp_path, render, 9, [], "quiet")
    progress.start_launch(2, [2], 9)
    progress.events = None
    from distbench.launch.events import parse_round

    progress.started_round([r for r in map(parse_round, log.read_text().splitlines()) if r])
    assert progress.rounds_left() is None and "ETA" not in progress.clock()
