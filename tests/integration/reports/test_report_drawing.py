"""The report's figures drawn in forked children (reports/report/figures/drawing.py): the same
bytes as drawn in the report's own process; a child that is killed or fails leaves its
figure to the report; a report that fails leaves no child behind. Faults come from this side:
the children's function is replaced here, never through a product flag."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from distbench.reports.report.figures import drawing
from distbench.reports.report.page import build
from distbench.reports.report.page.build import build_report
from tests.paths import DATA

CLUSTERS = [str(DATA / "cluster-a"), str(DATA / "cluster-b")]


def pngs(out: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(out.glob("fig-*.png"))}


@pytest.fixture(scope="module")
def in_process(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The fixture runs' figures drawn in the report's own process."""
    out = tmp_path_factory.mktemp("in-process")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(drawing, "forks", lambda: False)
        build_report(CLUSTERS, str(out))
    figures = pngs(out)
    assert len(figures) >= 5, sorted(figures)
    return figures


def test_children_draw_the_same_bytes_as_the_report_itself(
    in_process: dict[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert drawing.forks(), "Linux with 2 CPUs: this box draws in children"
    received: list[bytes | None] = []
    real = drawing.Drawn.received

    def counted(self: drawing.Drawn) -> bytes | None:
        received.append(real(self))
        return received[-1]

    monkeypatch.setattr(drawing.Drawn, "received", counted)
    build_report(CLUSTERS, str(tmp_path / "forked"))
    assert len(received) == len(in_process)
    assert all(data is not None for data in received), "every figure came from its child"
    assert pngs(tmp_path / "forked") == in_process
    assert not multiprocessing.active_children()


def report_figures(out: str) -> dict[str, bytes]:
    """A report of the fixture runs, in whatever process runs this (a pool's worker below)."""
    build_report(CLUSTERS, out)
    return pngs(Path(out))


def test_a_pool_worker_draws_the_figures_itself(
    in_process: dict[str, bytes], tmp_path: Path
) -> None:
    """A multiprocessing pool's workers are daemons, which may have no children (starting one
    raised AssertionError): a report run there draws in its own process."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        figures = pool.apply(report_figures, (str(tmp_path / "out"),))
    assert figures == in_process


def is_killed(_figure: object, _conn: object) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


REAL_CHILD = drawing.draw_in_child


def fails_to_draw(_figure: object, conn: object) -> None:
    """The children's own function, given a figure whose drawing raises (only in the child)."""

    def boom() -> None:
        raise RuntimeError("drawing failed in the child")

    REAL_CHILD(boom, conn)  # type: ignore[arg-type]


FAULTS: dict[str, Callable[[object, object], None]] = {
    "killed": is_killed,
    "fails": fails_to_draw,
}


@pytest.mark.parametrize("fault", FAULTS.values(), ids=list(FAULTS))
def test_a_child_that_dies_leaves_its_figure_to_the_report(
    fault: Callable[[object, object], None],
    in_process: dict[str, bytes],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(drawing, "draw_in_child", fault)
    build_report(CLUSTERS, str(tmp_path / "out"))
    assert pngs(tmp_path / "out") == in_process
    assert not multiprocessing.active_children()


def test_a_figure_that_fails_in_its_child_fails_in_the_report_with_its_own_error() -> None:
    """The child's failure is silent; drawing it again in the report raises the real error."""
    drawn = drawing.draw(drawing.later(True, lambda: None))  # said ready, draws nothing
    with pytest.raises(ValueError, match="drew nothing"):
        drawn.png()
    drawing.PENDING.clear()


def test_a_report_that_fails_stops_its_children(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[int] = []

    def slow(figure: object, conn: object) -> None:
        time.sleep(60)

    real_start = drawing.Drawn.start

    def start(self: drawing.Drawn) -> None:
        real_start(self)
        if self.child is not None:
            started.append(self.child.pid or 0)

    def broken(*_args: object) -> None:
        raise RuntimeError("the page could not be written")

    monkeypatch.setattr(drawing, "draw_in_child", slow)
    monkeypatch.setattr(drawing, "MAX_CHILDREN", 100)  # every figure's child starts at once
    monkeypatch.setattr(drawing.Drawn, "start", start)
    monkeypatch.setattr(build, "prepare_out", broken)  # before any figure is asked for
    began = time.monotonic()
    with pytest.raises(RuntimeError, match="could not be written"):
        build_report(CLUSTERS, str(tmp_path / "out"))
    assert started, "children were drawing when the report failed"
    assert time.monotonic() - began < 30, "the report waited for its children"
    assert not multiprocessing.active_children()
    assert not drawing.PENDING
