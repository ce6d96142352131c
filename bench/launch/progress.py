"""What a user sees while a run measures: the measurement running now (primitive, world size, size,
dtype), i of N, the elapsed time and an ETA, and each primitive's table as soon as it is done.

The CLI never imports torch, so it learns what the ranks do from two files that it polls with the
heartbeats: results.csv (rank 0 appends a row per finished measurement) and logs/ws<N>-progress.log
(rank 0 appends `<unix time> begin <measurement> <what>` as each one starts, and `<unix time>
round k of N over M measurements` as a round of interleaved or grouped trials starts, whose rows
land in their last round: groups.announce_measurements). Three ways to show it:

- `bar`: stderr is a terminal; a live rich bar naming the running measurement, tables above it.
- `lines`: a pipe or a CI log; one line per finished measurement, a line for a measurement
  still running after RUNNING_NOTE_S (then every RUNNING_REPEAT_S), so a 1G all_reduce is not
  silent for minutes, and a line for a round of trials begun RUNNING_NOTE_S or more after the
  last line, so an interleaved launch is not silent until its last round.
- `quiet` (--quiet): no progress at all; the tables still go to stdout.

The ETA (launch/eta.py) fits the seconds of the measurements this invocation finished to their
sizes and sums that over the sizes still planned (a comm run); elsewhere it is their mean time
times those left. Before any row of an interleaved launch has landed, it is the rounds' mean
time times the rounds left. A guess, and it says so with its `~`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from distbench.collectors.schema import RESULTS_CSV, progress_path
from distbench.launch.eta import Eta
from distbench.launch.events import (
    Begin,
    FileTail,
    Round,
    RowTail,
    describe,
    parse_begin,
    parse_round,
    part_of,
    row_size,
    row_what,
)

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


class RunProgress:
    """Progress of one run (every launch of it), polled by the launch loop."""

    def __init__(
        self, run_dir: Path, render: Render, total: int, kept: Sequence[dict[str, str]], mode: Mode,
        planned: Sequence[int] = (), is_planned: Callable[[str], bool] = lambda m: True,
    ) -> None:  # fmt: skip
        """`planned`: the size (bytes asked for) of every measurement of the run, where known;
        `is_planned`: whether a measurement id is one of the `total` planned, not a row past the
        plan (pairs: an outlier's confirmation), which the counter shows but does not count."""
        self.run_dir, self.render, self.total, self.mode = run_dir, render, total, mode
        self.is_planned = is_planned
        self.ended = {row.get("measurement", "") for row in kept}
        self.done = sum(map(is_planned, self.ended))
        self.eta = Eta(planned)
        for row in kept:  # a resumed run's rows: their sizes are not to come
            self.eta.take(row_size(row))
        self.began: dict[str, float] = {}  # measurement -> unix time it began
        self.launch_left = 0  # measurements the current launch has still to finish
        self.past_plan = False  # rows past the plan may follow its last planned one
        self.first_begin = 0.0  # unix time this invocation's first measurement began
        self.new = 0
        self.start = time.monotonic()
        self.rows = RowTail(run_dir / RESULTS_CSV)
        self.events: FileTail | None = None
        self.running: Begin | None = None
        self.round: Round | None = None  # the round of trials running (interleaved, grouped)
        self.rounds_began = 0.0  # unix time its stretch's round 1 began
        self.last_line = 0.0  # unix time `lines` mode last printed a line
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
        if self.new == 0 and (by_rounds := self.rounds_left()) is not None:
            return f"{format_clock(elapsed)} elapsed, ETA ~{format_clock(by_rounds)}"
        left = self.eta.seconds_left(max(0, self.total - self.done))
        if self.new == 0 or not self.first_begin or left is None:
            return f"{format_clock(elapsed)} elapsed"
        seconds, floor = left
        return f"{format_clock(elapsed)} elapsed, ETA {'>= ' * floor}~{format_clock(seconds)}"

    def took(self, measurement: str) -> float:
        """Seconds a measurement that just landed took: since its begin line; in rounds of
        trials (interleaved, grouped: its begin line comes in the last round, before its last
        trial) its share of the rounds' time since their first."""
        at = self.round
        if at is not None and at.number == at.of and self.rounds_began:
            return (time.time() - self.rounds_began) / at.measurements
        return time.time() - self.began.get(measurement, self.first_begin or time.time())

    def rounds_left(self) -> float | None:
        """Seconds to the end of the running rounds, from their mean so far, where they hold
        every measurement the launch has left (interleaved; grouped rounds hold a few): None
        before round 2, or where they do not."""
        at = self.round
        if at is None or at.number < 2 or at.measurements < self.launch_left:
            return None
        per_round = (at.unix_s - self.rounds_began) / (at.number - 1)
        return per_round * (at.of - at.number + 1)

    def start_launch(
        self, world_size: int, measured: Sequence[int], remaining: int, unfinished: int = 0,
        past_plan: bool = False,
    ) -> None:  # fmt: skip
        """`remaining`: the launch's planned rows to come; `unfinished`: its sizes whose rows are
        kept but whose work was cut short (pairs' standings: launch/planned.py); `past_plan`:
        rows past the plan may follow the last planned one (pairs' confirmations), so its table
        waits for the launch's end."""
        self.launch_left, self.round, self.rounds_began = remaining, None, 0.0
        self.past_plan = past_plan
        self.events = FileTail(progress_path(self.run_dir, world_size), from_end=True)
        sizes = ", ".join(str(size) for size in measured)
        more = (
            f", and {unfinished} size(s) to finish (rows kept, work cut short)"
            if unfinished
            else ""
        )
        text = (
            f"starting {world_size} rank{'s' * (world_size != 1)} (world size"
            f"{'s' * (len(measured) > 1)} {sizes}): "
            f"{remaining} of {self.total} measurements to go{more}"
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
        rounds = [found for found in map(parse_round, lines) if found is not None]
        if rounds:
            self.started_round(rounds)
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

    def started_round(self, rounds: Sequence[Round]) -> None:
        """The latest round of trials: the bar's description, or (`lines`) a line when
        RUNNING_NOTE_S or more passed since the last one."""
        for found in rounds:
            if found.number == 1:
                self.rounds_began = found.unix_s
        self.round = at = rounds[-1]
        text = f"round {at.number}/{at.of} of trials over {at.measurements} measurements"
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, description=text, clock=self.clock())
        elif self.mode == "lines" and time.time() - self.last_line >= RUNNING_NOTE_S:
            self.last_line = time.time()
            print(
                f"[{self.done}/{self.total}] {text}  ({self.clock()})", file=sys.stderr, flush=True
            )

    def note_running(self) -> None:
        """lines: a measurement running RUNNING_NOTE_S gets a line, then one every
        RUNNING_REPEAT_S; bar: the clock moves."""
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, clock=self.clock())
        if self.mode != "lines" or self.running is None or time.time() < self.next_note:
            return
        ran = time.time() - self.running.unix_s
        self.next_note, self.last_line = time.time() + RUNNING_REPEAT_S, time.time()
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
        planned = self.is_planned(measurement)
        self.done, self.new = self.done + planned, self.new + 1
        self.eta.finished(row_size(row), self.took(measurement))
        if self.running is not None and self.running.measurement == measurement:
            self.running = None
        what = self.seen.get(measurement) or row_what(row)
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, completed=self.done, clock=self.clock())
        elif self.mode == "lines":
            extra = "" if planned else f" ({measurement}: beyond the plan, measured again)"
            line = f"[{self.done}/{self.total}] done {what}{extra}  ({self.clock()})"
            print(line, file=sys.stderr, flush=True)
            self.last_line = time.time()
        self.add_row(row)
        self.launch_left -= planned
        if planned and self.launch_left == 0 and not self.past_plan:
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
