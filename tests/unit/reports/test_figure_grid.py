"""The fixed grid of the many-panel figures (reports/report/figures/grid.py): no panel's tick
labels, axis labels or title reach into another panel, the legend below or the figure's title,
and everything stays inside the figure, on crowded figures (10 panels, 40 lines, labels from
1 µs to 1e6 µs). A grid with its gaps taken away must fail the same check."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from distbench.reports.report.figures import collectives as fg
from distbench.reports.report.figures import compare as fc
from distbench.reports.report.figures.grid import tick_text

PRIMITIVES = ("all_reduce", "all_gather", "broadcast", "reduce", "all_to_all")
MODES = ("throughput", "latency")
SERIES = [f"site-{s} · {d} · ws{n}" for s in "ab" for d in ("float32", "bfloat16") for n in (2, 4)]


def crowded_points() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = [
        (p, m, s, 1024 * 2**k, (1 + 2**k / 8) * rng.lognormal(0, 0.1))
        for p, m, s, k, _ in itertools.product(PRIMITIVES, MODES, SERIES, range(22), range(3))
    ]
    return pd.DataFrame(rows, columns=["primitive", "mode", "series", "size_bytes", "time_us"])


def scaling_rows() -> pd.DataFrame:
    rows = [
        (f"{p} · {m}", line, f"{size // 1024}K", size, n, 10.0 * n * size / 1024, size / 1e3 / n)
        for p, m, line, size, n in itertools.product(
            PRIMITIVES, MODES, ("site-a · float32", "site-b · float32"), (1024, 2**20), (2, 4, 8)
        )
    ]
    columns = ["panel", "line", "size", "requested_bytes", "world_size", "time_us_p50"]
    return pd.DataFrame(rows, columns=[*columns, "busbw_GBps"])


def ratio_rows() -> pd.DataFrame:
    frame = crowded_points().groupby(["primitive", "mode", "series", "size_bytes"]).median()
    frame = frame.reset_index().assign(speedup=lambda f: f["time_us"] / f["time_us"].mean())
    return frame.assign(low=frame["speedup"] * 0.8, high=frame["speedup"] * 1.25, state="x")


def collisions(figure: Figure) -> list[str]:
    """Pairs of boxes (each visible panel with its labels and title, each legend, the figure's
    title) that overlap by more than a pixel, and boxes that leave the figure."""
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    boxes: list[tuple[str, Bbox]] = []
    for i, ax in enumerate(figure.axes):
        box = ax.get_tightbbox(renderer)
        if ax.get_visible() and box is not None:
            boxes.append((f"panel {i} ({ax.get_title()})", box))
    boxes += [
        (f"legend {i}", legend.get_window_extent(renderer))
        for i, legend in enumerate(figure.legends)
    ]
    suptitle = getattr(figure, "_suptitle", None)
    if suptitle is not None:
        boxes.append(("title", suptitle.get_window_extent(renderer)))
    found = [
        f"{a} overlaps {b}"
        for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2)
        if box_a.padded(-1).overlaps(box_b.padded(-1))
    ]
    inside = figure.bbox.padded(1)
    found += [
        f"{name} leaves the figure"
        for name, box in boxes
        if not inside.contains(box.x0, box.y0) or not inside.contains(box.x1, box.y1)
    ]
    return found


def crowded_figures() -> dict[str, Figure | None]:
    points = crowded_points()
    return {
        "time": fg.plot_vs_size(points, "time_us", "time p50 (µs)", "Time vs size (p50, p5-p95)"),
        "scaling": fg.plot_scaling(scaling_rows()),
        "compare": fc.plot_ratios(ratio_rows(), "site-a"),
    }


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e-5, "1e-5"),
        (0.002, "0.002"),
        (50.0, "50"),
        (2000.0, "2000"),
        (1e4, "1e4"),
        (2.5e7, "2.5e7"),
    ],
)
def test_log_labels_keep_one_form_per_range(value: float, text: str) -> None:
    assert tick_text(value) == text


def test_a_long_baseline_name_keeps_the_title_inside_a_one_panel_figure() -> None:
    """A new user's report of two runs printed fig-compare.png's title as `mpared:
    20261205T102753Z-all_reduce p50 time / this run's p50 time (> 1`: a run directory's name
    made it wider than a one-panel figure. The title shrinks to fit; the check is the crowded
    figures' own (inside the figure, overlapping nothing)."""
    rows = ratio_rows()
    one = rows[(rows["primitive"] == "all_reduce") & (rows["mode"] == "throughput")]
    figure = fc.plot_ratios(one, "20261205T102753Z-all_reduce")
    assert figure is not None and collisions(figure) == []


def test_a_log_axis_within_one_step_still_has_labels() -> None:
    """A new user's fit figure drew a send_recv panel with no y label at all: its times lay
    between two 1-2-5 ticks (110-190 us, ticks at 100 and 200)."""
    from matplotlib.figure import Figure as Plain

    from distbench.reports.report.figures.grid import log_y

    figure = Plain()
    ax = figure.subplots()
    values = [110.0, 150.0, 190.0]
    ax.plot([1, 2, 3], values)
    log_y(ax, values)
    FigureCanvasAgg(figure).draw()
    low, high = ax.get_ylim()
    shown = [t for t in ax.get_yticks() if low <= t <= high]
    assert len(shown) >= 2, (ax.get_ylim(), ax.get_yticks())
