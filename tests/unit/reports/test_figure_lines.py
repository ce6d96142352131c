"""reports/report/figures/lines.py draws a panel's lines as collections: the picture, the axis
limits and the legend entries are those `ax.plot` per line gives. Proven by drawing both and
comparing, and by a mutation (one line's colour or style changed) that the comparison sees."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image

from distbench.reports.report.figures.lines import LegendEntry, Line, draw_many, segments, shown

X = np.array([1024.0, 4096.0, 65536.0, 1 << 20, 1 << 22])
LINES = [
    Line(X, np.array([10.0, 12.0, 40.0, 300.0, 1200.0]), (0.1, 0.4, 0.8), "-", "o", 4,
         label="a"),
    Line(X, np.array([20.0, np.nan, 60.0, 500.0, 2000.0]), (0.9, 0.3, 0.1), "--", "s", 4,
         label="b"),
    Line(X, np.array([5.0, 6.0, 0.0, 100.0, 800.0]), (0.2, 0.7, 0.3), ":", "^", 4, label="c"),
    Line(X[:3], np.array([30.0, 30.0, 30.0]), "grey", "", "x", 6),
    Line(X[1:], np.array([8.0, 9.0, 10.0, 11.0]), "grey", "", "o", 6, face="white", edge="grey"),
]  # fmt: skip


def plotted(ax, lines: list[Line]) -> None:
    """What the figures did before: one ax.plot per line."""
    for line in lines:
        kwargs = {"color": line.color, "label": line.label or None,
                  "linestyle": line.style or "none"}  # fmt: skip
        if line.marker:
            kwargs |= {"marker": line.marker, "markersize": line.size}
        if line.face is not None:
            kwargs |= {"markerfacecolor": line.face, "markeredgecolor": line.edge}
        if line.width is not None:
            kwargs["linewidth"] = line.width
        ax.plot(line.x, line.y, **kwargs)


def panel(draw) -> tuple[Figure, np.ndarray]:
    fig = Figure(figsize=(4, 3))
    ax = fig.subplots()
    draw(ax)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    return fig, np.asarray(Image.open(buffer).convert("RGB")).astype(int)


def differing(a: np.ndarray, b: np.ndarray, tolerance: int = 90) -> float:
    """The share of pixels of either image with no pixel alike (summed RGB difference at most
    `tolerance`) within one pixel of it in the other: a marker moved by a pixel is alike, a line
    in another colour is not."""

    def unmatched(one: np.ndarray, other: np.ndarray) -> np.ndarray:
        best = np.full(other.shape[:2], 10**9)
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                moved = np.roll(one, (dy, dx), axis=(0, 1))
                best = np.minimum(best, np.abs(moved - other).sum(axis=2))
        return best > tolerance

    return float((unmatched(a, b) | unmatched(b, a)).mean())


def entries(ax) -> list[tuple]:
    """The legend's entries of a panel: label, colour, style, marker and its size, in order."""
    handles, labels = ax.get_legend_handles_labels()
    return [(label, h.get_color(), h.get_linestyle(), h.get_marker(), h.get_markersize())
            for h, label in zip(handles, labels, strict=True)]  # fmt: skip


def test_segments_break_where_plot_breaks() -> None:
    parts = segments(shown(Line(X, np.array([1.0, np.nan, 3.0, np.nan, 5.0]), "k")))
    assert [p.tolist() for p in parts] == [[[1024.0, 1.0]], [[65536.0, 3.0]], [[X[-1], 5.0]]]
    assert [len(p) for p in segments(shown(LINES[0]))] == [5]
    kept = segments(shown(Line(X, np.array([1.0, 2.0, 0.0, 4.0, 5.0]), "k")))
    assert [len(p) for p in kept] == [5]  # 0 stays: a log axis clips it as it clips a Line2D


def test_collections_draw_what_plot_draws() -> None:
    old_fig, old = panel(lambda ax: plotted(ax, LINES))
    new_fig, new = panel(lambda ax: draw_many(ax, LINES))
    (old_ax,), (new_ax,) = old_fig.axes, new_fig.axes
    assert old_ax.get_xlim() == pytest.approx(new_ax.get_xlim())
    assert old_ax.get_ylim() == pytest.approx(new_ax.get_ylim())
    assert (np.abs(old - new).sum(axis=2) > 0).mean() < 0.015  # unsnapped markers' edges
    assert differing(old, new) < 0.002  # ... each within a pixel of where a Line2D put it
    assert entries(old_ax) == entries(new_ax)
    assert all(isinstance(line, LegendEntry) for line in new_ax.get_lines())
    assert [line.get_label() for line in new_ax.get_lines()] == ["a", "b", "c"]


def test_a_wrong_colour_or_style_is_seen() -> None:
    """Mutation: one line in another colour must fail the picture's check; in another style or
    with another marker, the legend's."""
    old_fig, old = panel(lambda ax: plotted(ax, LINES))
    recoloured = [LINES[0], Line(**{**LINES[1].__dict__, "color": (0.1, 0.4, 0.8)}), *LINES[2:]]
    _, new = panel(lambda ax: draw_many(ax, recoloured))
    assert differing(old, new) > 0.003
    for change in ({"style": "-"}, {"marker": "o"}):
        changed = [LINES[0], Line(**{**LINES[1].__dict__, **change}), *LINES[2:]]
        new_fig, _ = panel(lambda ax, lines=changed: draw_many(ax, lines))
        assert entries(old_fig.axes[0]) != entries(new_fig.axes[0]), change
