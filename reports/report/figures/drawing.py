"""A report's PNGs, drawn beside its other work: each figure is built and drawn (matplotlib's
artists and `savefig`'s pixels, half of a big report's CPU) in a forked child while the report
goes on judging and tabulating, so a 2-core box draws on one core and tabulates on the other.

    drawn = draw(later(not points.empty, plot_vs_size, points, ...))  # returns at once
    ...
    drawn.png()             # the PNG's bytes, waiting for the child if it is still drawing

Forked, not spawned: the child has the report's frames (and a figure built here) in memory as
they are (a figure does not pickle: its tick formatters are closures) and imports nothing. Only
on Linux, where fork is the platform's own way (macOS's system libraries do not support fork
without exec), with two or more CPUs to draw on, and not in a daemon (a multiprocessing pool's
worker, which may have no children). A child that cannot start (the box refuses a process: an
OSError, as a sandbox's) or dies before its PNG arrives leaves the figure to be drawn here, in
this process: the bytes are the same either way (tests/integration/reports/test_report_drawing.py).
"""

from __future__ import annotations

import contextlib
import gc
import io
import multiprocessing
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from functools import partial
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from matplotlib.figure import Figure

PNG_COMPRESSION = 1
"""zlib level of the PNGs (Pillow's default is 6): the same pixels, ~10 % more bytes, and the
encoding of a 10,000-row report's five figures takes ~0.1 s CPU instead of ~1.3 s
(docs/performance.md)."""

PNG_DPI = 90

CHILD_NICE = 10
"""A child draws at this niceness: it takes the CPU the report's own work leaves, for that work
is the report's critical path (2 cores, the 10,000-row report before shown.MOST_LINES: 4.8 s
wall at niceness 10, 5.6 s at the report's own), and on a box busy with other work the children
add to the report's share of the CPU rather than take from its own work."""

MAX_CHILDREN = 6
"""Children drawing at once (a report has up to ~12 figures): past that, the oldest one's PNG is
waited for before the next child starts."""


def png_bytes(figure: Figure) -> bytes:
    """The figure as PNG, drawn in this process."""
    buffer = io.BytesIO()
    options = {"compress_level": PNG_COMPRESSION}
    figure.savefig(buffer, format="png", dpi=PNG_DPI, pil_kwargs=options)
    return buffer.getvalue()


def cpus() -> int:
    """The CPUs this process may run on (a Slurm or cgroup CPU set counts, not the node's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def forks() -> bool:
    """Whether figures are drawn in forked children here: Linux, two CPUs or more, and a process
    that may have children (a multiprocessing pool's workers are daemons, which may not)."""
    daemon = multiprocessing.current_process().daemon
    return sys.platform == "linux" and cpus() >= 2 and not daemon


Build = Callable[[], Figure | None]
"""A figure to build where it is drawn: a plot function and its arguments (`later`)."""


def later(ready: bool, plot: Callable[..., Figure | None], *args: object) -> Build | None:
    """`plot(*args)`, built when drawn (in the child), or None when not `ready`: the plot's own
    test of its data (it returns None exactly then), so the caller's note for a missing figure
    is written here and in order."""
    return partial(plot, *args) if ready else None


def built(figure: Figure | Build) -> Figure:
    """The figure, building it if it is a Build; a Build that gives none is a caller's bug
    (`later` was told ready for data its plot refuses)."""
    if isinstance(figure, Figure):
        return figure
    made = figure()
    if made is None:
        raise ValueError(f"{figure} drew nothing: its `later` said the data was there")
    return made


def draw_in_child(figure: Figure | Build, conn: Connection) -> None:
    """The child: build and draw, send the bytes, leave without running the parent's exit
    handlers. Any failure (a Ctrl-C meant for the parent too) ends it silently: the parent
    draws instead, and an error of the figure's own is raised there."""
    code = 1
    gc.disable()  # a short life: collecting would copy every page it shares with the parent
    os.nice(CHILD_NICE)
    try:
        conn.send_bytes(png_bytes(built(figure)))
        code = 0
    except BaseException:  # the parent draws it again, and says what went wrong there
        pass
    finally:
        os._exit(code)


class Drawn:
    """One figure's PNG: drawn by a child (`start`) or here, on first `png()`."""

    def __init__(self, figure: Figure | Build) -> None:
        self.figure: Figure | Build | None = figure
        self.bytes: bytes | None = None
        self.child: BaseProcess | None = None
        self.conn: Connection | None = None

    def start(self) -> None:
        """Fork the child that draws; on a box that refuses a process, nothing (png() draws)."""
        fork = multiprocessing.get_context("fork")
        receive, send = fork.Pipe(duplex=False)
        child = fork.Process(target=draw_in_child, args=(self.figure, send), daemon=True)
        try:
            with warnings.catch_warnings():
                # Python >= 3.12 warns on fork in a process with threads: here BLAS's idle pool.
                # The child draws with Agg in Python and touches no BLAS, lock or thread.
                warnings.filterwarnings("ignore", "This process .* is multi-threaded")
                child.start()
        except OSError:
            receive.close()
            send.close()
            return
        send.close()  # the child's end: the parent's copy closed, so a dead child reads as EOF
        self.child, self.conn = child, receive

    def png(self) -> bytes:
        """The PNG's bytes: the child's (waiting for it), else drawn here."""
        if self.bytes is None:
            self.bytes = self.received()
            if self.bytes is None:
                assert self.figure is not None
                self.bytes = png_bytes(built(self.figure))
            self.figure = None  # the figure's artists are not needed once drawn
        return self.bytes

    def received(self) -> bytes | None:
        """The child's bytes, or None when there was no child or it died before sending."""
        if self.conn is None or self.child is None:
            return None
        try:
            data: bytes | None = self.conn.recv_bytes()
        except (EOFError, OSError):
            data = None
        self.conn.close()
        self.child.join()
        self.child, self.conn = None, None
        return data

    def discard(self) -> None:
        """Stop a child whose PNG is no longer wanted (the report failed before writing)."""
        if self.child is not None:
            self.child.kill()
            self.child.join()
        if self.conn is not None:
            self.conn.close()
        self.child, self.conn = None, None


PENDING: list[Drawn] = []
"""Figures whose child may still be drawing: the report discards them if it fails."""


def draw(figure: Figure | Build) -> Drawn:
    """Start drawing `figure` (built, or to build): in a child where `forks()`, else here when
    its png() is asked for."""
    drawn = Drawn(figure)
    if forks():
        running = [d for d in PENDING if d.child is not None]
        if len(running) >= MAX_CHILDREN:
            running[0].png()
        drawn.start()
        PENDING.append(drawn)
    return drawn


@contextlib.contextmanager
def drawing_session() -> Iterator[None]:
    """Around a report: a child still drawing when the report ends (it failed, or a figure was
    not written) is stopped, not left behind."""
    try:
        yield None
    finally:
        for drawn in PENDING:
            drawn.discard()
        PENDING.clear()
