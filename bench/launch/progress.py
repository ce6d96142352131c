"""What a user sees while a run measures: the measurement running now (primitive, world size, size,
dtype), i of N, the elapsed time and an ETA, and each primitive's table as soon as it is done.

The CLI never imports torch, so it learns what the ranks do from two files that it polls with the
heartbeats: results.csv (rank 0 appends a row per finished measurement) and logs/ws<N>-progress.log
(rank 0 appends `<unix time> begin <measurement> <what>` as each one starts, groups.
announce_measurements). Three ways to show it:

- `bar`: stderr is a terminal; a live rich bar naming the running measurement, tables above it.
- `lines`: a pipe or a CI log; one line per finished measurement, and a line for a measurement
  still running after RUNNING_NOTE_S (then every RUNNING_REPEAT_S), so a 1G all_reduce is not
  silent for minutes.
- `quiet` (--quiet): no progress at all; the tables still go to stdout.

The ETA (launch/eta.py) fits the seconds of the measurements this invocation finished to their
sizes and sums that over the sizes still planned (a comm run); elsewhere it is their mean time
times those left. A guess, and it says so with its `~`.
"""

from __future__ import annotations

import csv
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from distbench.collectors.schema import RESULTS_CSV, progress_path
from distbench.launch.eta import Eta
from distbench.parse import format_size

RUNNING_NOTE_S = 2.0
"""In `lines` mode, a measurement running this long gets a line of its own."""
RUNNING_REPEAT_S = 30.0
"""... and another every this many seconds while it runs."""

Mode = Literal["bar", "lines", "quiet"]
Render = Callable[[Sequence[dict[str, str]]], str]


def choose_mode(quiet: bool, console: Console) -> Mode:
    if quiet:
        return "quiet"
    return "bar" if console.is_terminal and not console.is_dumb_terminal else "lines"


def format_clock(seconds: float) -> str:
    """0:07, 12:05, 1:02:03."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def describe(measurement: str, what: str) -> str:
    """A begin line's `<what>` for people: `all_reduce float32 throughput size=1M world_size=2`
    (sizes with their suffix; the world size from the id `[tag]ws<N>/i<k>`)."""
    text = re.sub(r"\bsize=(\d+)\b", lambda m: f"size={format_size(int(m.group(1)))}", what)
    found = re.search(r"ws(\d+)/i\d+$", measurement)
    return f"{text} world_size={found.group(1)}" if found else text


def row_what(row: dict[str, str]) -> str:
    """A finished row whose measurement announced no begin line (init's repetitions): what it
    measured from its own cells, `init env:init_process_group world_size=3 (ws3/i3)`."""
    cells = [row.get(c, "") for c in ("primitive", "pattern", "strategy")]
    text = " ".join(c for c in cells if c)
    size = f" world_size={row['world_size']}" if row.get("world_size") else ""
    return f"{text}{size} ({row.get('measurement', '')})"


def part_of(measurement: str, primitive: str) -> tuple[str, str]:
    """The table a measurement belongs to: its launch's world size (with a sweep's backend tag)
    and its primitive; a DDP row's primitive is `ddp`."""
    return measurement.rsplit("/i", 1)[0], primitive


def row_size(row: dict[str, str]) -> int | None:
    """The size a results.csv row was asked for (requested_bytes, else size_bytes); None
    without one (DDP, init)."""
    for column in ("requested_bytes", "size_bytes"):
        text = row.get(column, "")
        if text and text.replace(".", "", 1).isdigit():
            return int(float(text))
    return None


@dataclass(frozen=True)
class Begin:
    """A measurement that started: `<unix time> begin <measurement> <primitive> <rest>`."""

    measurement: str
    what: str
    unix_s: float

    @property
    def part(self) -> tuple[str, str]:
        return part_of(self.measurement, self.what.split(" ", 1)[0])


def parse_begin(line: str) -> Begin | None:
    fields = line.split(" ", 3)
    if len(fields) < 4 or fields[1] != "begin":
        return None
    try:
        return Begin(fields[2], fields[3].strip(), float(fields[0]))
    except ValueError:
        return None


class FileTail:
    """The whole lines appended to a file after a point (a line still being written waits)."""

    def __init__(self, path: Path, from_end: bool) -> None:
        self.path = path
        self.offset = path.stat().st_size if from_end and path.exists() else 0

    def read_lines(self) -> list[str]:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n") + 1
        self.offset += end
        return data[:end].decode("utf-8", errors="replace").splitlines()


class RowTail:
    """results.csv rows appended after a point, as csv.DictReader reads them."""

    def __init__(self, path: Path) -> None:
        self.header: list[str] | None = None
        self.lines = FileTail(path, from_end=False)
        self.skip = True  # rows already there when the run (or the resume) started
        self.read()
        self.skip = False

    def read(self) -> list[dict[str, str]]:
        lines = self.lines.read_lines()
        if self.header is None and lines:
            self.header, lines = next(csv.reader(lines[:1])), lines[1:]
        if self.skip or self.header is None:
            return []
        return [dict(zip(self.header, values, strict=False)) for values in csv.reader(lines)]


class RunProgress:
    """Progress of one run (every launch of it), polled by the launch loop."""

    def __init__(
        self, run_dir: Path, render: Render, total: int, kept: Sequence[dict[str, str]], mode: Mode,
        planned: Sequence[int] = (),
    ) -> None:  # fmt: skip
        """`planned`: the size (bytes asked for) of every measurement of the run, where known."""
        self.run_dir, self.render, self.total, self.mode = run_dir, render, total, mode
        self.ended = {row.get("measurement", "") for row in kept}
        self.done = len(self.ended)
        self.eta = Eta(planned)
        for row in kept:  # a resumed run's rows: their sizes are not to come
            self.eta.take(row_size(row))
        self.began: dict[str, float] = {}  # measurement -> unix time it began
        self.launch_left = 0  # measurements the current launch has still to finish
        self.first_begin = 0.0  # unix time this invocation's first measurement began
        self.new = 0
        self.start = time.monotonic()
        self.rows = RowTail(run_dir / RESULTS_CSV)
        self.events: FileTail | None = None
        self.running: Begin | None = None
        self.next_note = 0.0  # when the running measurement gets its next line (lines mode)
        self.seen: dict[str, str] = {}  # measurement -> what, for its finished line
        self.pending: list[dict[str, str]] = []
        self.console = Console(stderr=True)
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        if mode == "bar":
            self.bar = Progress(
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[clock]}", markup=False),
                console=self.console,
                transient=True,
                redirect_stdout=sys.stdout.isatty(),  # tables print above the bar
            )
        self.print_kept(kept)

    def print_kept(self, kept: Sequence[dict[str, str]]) -> None:
        """A resumed run: the tables the interrupted one finished, at once; the rows of the part
        it was in wait for the rest of that part, so that every row is printed once."""
        for row in kept:
            self.add_row(row)

    def __enter__(self) -> RunProgress:
        if self.bar is not None:
            self.bar.start()
            self.task = self.bar.add_task("starting", total=self.total, clock="")
            self.bar.update(self.task, completed=self.done)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def clock(self) -> str:
        """`0:12 elapsed, ETA ~0:30`: the ETA from the mean time per measurement since the
        first one began (the ranks' start-up is not a measurement's)."""
        elapsed = time.monotonic() - self.start
        left = self.eta.seconds_left(max(0, self.total - self.done))
        if self.new == 0 or not self.first_begin or left is None:
            return f"{format_clock(elapsed)} elapsed"
        seconds, floor = left
        return f"{format_clock(elapsed)} elapsed, ETA {'>= ' * floor}~{format_clock(seconds)}"

    def start_launch(self, world_size: int, measured: Sequence[int], remaining: int) -> None:
        self.launch_left = remaining
        self.events = FileTail(progress_path(self.run_dir, world_size), from_end=True)
        sizes = ", ".join(str(size) for size in measured)
        text = (
            f"starting {world_size} rank{'s' * (world_size != 1)} (world size"
            f"{'s' * (len(measured) > 1)} {sizes}): "
            f"{remaining} of {self.total} measurements to go"
        )
        self.show(text)

    def show(self, text: str, lines: bool = True) -> None:
        """One status: the bar's description, or (`lines`) a line on stderr."""
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, description=text, clock=self.clock())
        elif self.mode == "lines" and lines:
            print(text, file=sys.stderr, flush=True)

    def poll(self) -> None:
        """Read what the ranks wrote since the last poll and show it. Begin lines first: a row
        is on disk before the begin line of the measurement after it, so no row is missed."""
        lines = self.events.read_lines() if self.events is not None else []
        begins = [begin for begin in map(parse_begin, lines) if begin is not None]
        for begin in begins:
            self.seen[begin.measurement] = describe(begin.measurement, begin.what)
            self.began[begin.measurement] = begin.unix_s
            self.first_begin = self.first_begin or begin.unix_s
        for row in self.rows.read():
            self.finished(row)
        for begin in begins:
            if begin.measurement in self.ended:
                continue  # finished already (its row was read above): it says nothing of the next
            if self.pending and begin.part != self.part(self.pending[-1]):
                self.flush()  # the next primitive began: this one's table is complete
        if begins and begins[-1].measurement not in self.ended:
            self.running = begins[-1]
            self.next_note = self.running.unix_s + RUNNING_NOTE_S
            text = self.seen[self.running.measurement]
            self.show(f"{text} ({self.running.measurement})", lines=False)
        self.note_running()

    def note_running(self) -> None:
        """lines: a measurement running RUNNING_NOTE_S gets a line, then one every
        RUNNING_REPEAT_S; bar: the clock moves."""
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, clock=self.clock())
        if self.mode != "lines" or self.running is None or time.time() < self.next_note:
            return
        ran = time.time() - self.running.unix_s
        self.next_note = time.time() + RUNNING_REPEAT_S
        what = self.seen[self.running.measurement]
        print(
            f"[{self.done + 1}/{self.total}] running {what} for {format_clock(ran)}  "
            f"({self.clock()})",
            file=sys.stderr,
            flush=True,
        )

    def finished(self, row: dict[str, str]) -> None:
        measurement = row.get("measurement", "")
        self.ended.add(measurement)
        self.done, self.new = self.done + 1, self.new + 1
        if self.done > self.total:  # a row past the plan (pairs: an outlier's confirmation)
            self.total, self.launch_left = self.done, self.launch_left + 1
            if self.bar is not None and self.task is not None:
                self.bar.update(self.task, total=self.total)
        began = self.began.get(measurement, self.first_begin or time.time())
        self.eta.finished(row_size(row), time.time() - began)
        if self.running is not None and self.running.measurement == measurement:
            self.running = None
        what = self.seen.get(measurement) or row_what(row)
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, completed=self.done, clock=self.clock())
        elif self.mode == "lines":
            line = f"[{self.done}/{self.total}] done {what}  ({self.clock()})"
            print(line, file=sys.stderr, flush=True)
        self.add_row(row)
        self.launch_left -= 1
        if self.launch_left == 0:
            self.flush()  # the launch's last measurement: no need to wait for the ranks to exit

    @staticmethod
    def part(row: dict[str, str]) -> tuple[str, str]:
        return part_of(row.get("measurement", ""), row.get("primitive", ""))

    def add_row(self, row: dict[str, str]) -> None:
        if self.pending and self.part(row) != self.part(self.pending[-1]):
            self.flush()
        self.pending.append(row)

    def flush(self) -> None:
        """Print the table of the rows held back (the primitive just done), on stdout."""
        if self.pending:
            print(self.render(self.pending), flush=True)
            print(flush=True)
            self.pending = []

    def end_launch(self) -> None:
        self.poll()
        self.flush()
