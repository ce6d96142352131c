"""Progress on real 2-rank gloo runs (#21 §2). The half that launches or runs for seconds; the
in-process half, and the file's whole story: tests/unit/launch/test_progress.py."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest

from distbench.collectors.sink import read_rows

# 16M at 30 iterations takes seconds on this box: the running line and the table order show.
SLOW_SWEEP = ["--backend", "gloo", "--world-sizes", "2", "--sizes", "1K,16M", "--iters", "80"]


class Timed:
    """A CLI in a pipe, each line of stdout and stderr kept with its arrival time; `on_line`
    runs in the reader thread as a line arrives (to look at the run directory at that moment)."""

    def __init__(self, argv: list[str], on_line: Callable[[str, str], None] | None = None) -> None:
        self.start = time.monotonic()
        self.lines: list[tuple[float, str, str]] = []
        self.on_line = on_line
        env = dict(os.environ, OMP_NUM_THREADS="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "distbench", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.threads = [
            threading.Thread(target=self.pump, args=(self.proc.stdout, "out")),
            threading.Thread(target=self.pump, args=(self.proc.stderr, "err")),
        ]
        for thread in self.threads:
            thread.start()

    def pump(self, stream: IO[str], name: str) -> None:
        for line in stream:
            self.lines.append((time.monotonic() - self.start, name, line.rstrip("\n")))
            if self.on_line is not None:
                self.on_line(name, line)

    def wait(self, timeout_s: float = 240) -> int:
        code = self.proc.wait(timeout=timeout_s)
        for thread in self.threads:
            thread.join()
        return code

    def first(self, stream: str, pattern: str) -> tuple[float, str]:
        for at, name, line in self.lines:
            if name == stream and re.search(pattern, line):
                return at, line
        raise AssertionError(f"no {stream} line matches {pattern!r}:\n{self.text()}")

    def text(self) -> str:
        return "\n".join(f"{at:6.2f} {name}: {line}" for at, name, line in self.lines)


@pytest.mark.slow
def test_a_pipe_gets_a_line_per_measurement_and_each_table_when_its_primitive_is_done(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    broadcast_rows_at_table: list[int] = []

    def look(stream: str, line: str) -> None:
        if stream == "out" and line.startswith("# all_reduce"):
            rows = read_rows(out / "results.csv")
            broadcast_rows_at_table.append(sum(r["primitive"] == "broadcast" for r in rows))

    argv = ["sweep", "--primitives", "allreduce,broadcast", *SLOW_SWEEP, "--out", str(out)]
    run = Timed(argv, on_line=look)
    assert run.wait() == 0, run.text()

    first_at, first = run.first("err", ".")
    assert first_at < 5, run.text()  # something within 5 s of the start
    assert "4 of 4 measurements" in first

    done = [line for _, name, line in run.lines if name == "err" and "] done " in line]
    assert [line.split("]")[0] for line in done] == ["[1/4", "[2/4", "[3/4", "[4/4"], run.text()
    assert "all_reduce float32 throughput size=1K world_size=2" in done[0]
    assert "broadcast float32 throughput size=16M root=0 world_size=2" in done[3]
    assert all("elapsed" in line for line in done) and "ETA ~" in done[1]

    # the 16M all_reduce runs for seconds: it is named while it runs, before its done line
    running_at, _ = run.first("err", r"\[2/4\] running all_reduce float32 throughput size=16M")
    assert running_at < run.first("err", r"\[2/4\] done")[0]

    # all_reduce's table comes before broadcast has finished
    table_at, _ = run.first("out", r"^# all_reduce")
    assert table_at < run.first("err", r"\[4/4\] done broadcast")[0], run.text()
    assert broadcast_rows_at_table and broadcast_rows_at_table[0] < 2, broadcast_rows_at_table
    assert run.first("out", r"^# broadcast")[0] > table_at
    stdout = [line for _, name, line in run.lines if name == "out"]
    assert sum(line.startswith("# all_reduce") for line in stdout) == 1  # printed once


@pytest.mark.slow
def test_a_terminal_gets_a_live_bar_naming_the_running_measurement(tmp_path: Path) -> None:
    out = tmp_path / "run"
    leader, follower = pty.openpty()
    env = dict(os.environ, TERM="xterm", COLUMNS="160", OMP_NUM_THREADS="1")
    argv = ["allreduce", *SLOW_SWEEP, "--out", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "distbench", *argv],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        close_fds=True,
    )
    os.close(follower)
    raw = b""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the CLI is gone
                break
            if not chunk:
                break
            raw += chunk
        elif proc.poll() is not None:
            break
    os.close(leader)
    assert proc.wait(timeout=30) == 0
    text = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", raw.decode(errors="replace"))
    frames = text.replace("\r\n", "\n").split("\r")
    bar = [f for f in frames if "━" in f]  # rich's bar
    assert any("starting 2 ranks" in frame for frame in bar), text
    running = [f for f in bar if "all_reduce float32 throughput size=16M world_size=2" in f]
    assert running, text
    # 1K done, 16M to come: the mean of 1K's time is only a floor, and says so
    assert any(re.search(r"1/2 \d+:\d\d elapsed, ETA >= ~\d+:\d\d", f) for f in running), text
    assert "# all_reduce" in text and "16M" in text  # the table, printed above the bar
