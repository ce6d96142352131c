"""fig-compare: the speedup of every source over the baseline vs size, with its 95 % interval as
a band (reports/report/verdicts.py: compare's comparison, the launch as the unit); each point
shows its row's state: filled for improved (faster) or regressed (slower), a hollow ring for no
change seen, a grey cross for cannot tell (or not compared). Only the filled points are findings.
"""

# ruff: noqa: RUF001, RUF002  (the multiplication sign on purpose)

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from distbench.reports.report.figures.collectives import (
    band_polygon,
    line_palette,
    primitive_mode_figure,
    size_axis,
)
from distbench.reports.report.figures.lines import Line, draw_many
from distbench.stats.verdict import CANNOT_TELL, IMPROVED, NO_CHANGE, REGRESSED

STATE_KEYS = (
    ("o", "0.25", "0.25", f"{IMPROVED} (faster) / {REGRESSED} (slower)"),
    ("o", "white", "grey", NO_CHANGE),
    ("x", "grey", "grey", CANNOT_TELL),
)
"""The legend's entries for the points (marker, face, edge, label): each row's state
(distbench.stats.verdict)."""
AXIS_LIMITS = (1 / 16, 16.0)
"""The speedup axis never spans more than these (an interval wider than that runs off it)."""


def plot_ratios(ratios: pd.DataFrame, baseline: str) -> Figure | None:
    """Speedup (baseline p50 / this p50) vs size with its interval; one panel per primitive x
    mode; log axis, so 2× faster and 2× slower are as far from 1."""
    if ratios.empty:
        return None
    palette = line_palette(ratios["series"].unique())

    bounds = ("low", "high")
    entries: set[str] = set()  # one legend entry per line and state for the figure's one legend

    def draw(ax: Axes, panel: pd.DataFrame) -> None:
        bands: list[np.ndarray] = []
        colors: list[tuple[float, float, float]] = []
        drawn: list[Line] = []
        points: list[Line] = []
        for name, line in panel.groupby("series", sort=True):
            line = line.sort_values("size_bytes")
            color = palette[str(name)]
            x = line["size_bytes"].to_numpy(dtype=float)
            y = line["speedup"].to_numpy(dtype=float)
            drawn.append(Line(x, y, color, width=1.2, label=str(name)))
            if "low" in line:
                low, high = (np.clip(line[c].to_numpy(dtype=float), *AXIS_LIMITS) for c in bounds)
                bands.append(band_polygon(x, low, high))
                colors.append(color)
            state = line["state"] if "state" in line else pd.Series(REGRESSED, index=line.index)
            called = state.isin((IMPROVED, REGRESSED)).to_numpy()
            seen = (state == NO_CHANGE).to_numpy()
            blind = ~(called | seen)
            points += [Line(x[called], y[called], color, "", "o"),
                       Line(x[seen], y[seen], "grey", "", "o", 6, face="white", edge="grey"),
                       Line(x[blind], y[blind], "grey", "", "x", 6)]  # fmt: skip
        draw_many(ax, drawn + points, entries)
        if bands:
            ax.add_collection(PolyCollection(bands, facecolors=colors, alpha=0.2, linewidths=0))
        for marker, face, edge, label in STATE_KEYS:
            if label in entries:
                continue
            entries.add(label)
            ax.plot(
                [], [], marker, linestyle="none", label=label, color=edge, markerfacecolor=face,
                markeredgecolor=edge,
            )  # fmt: skip
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
        size_axis(ax, panel["size_bytes"].unique())
        values = np.concatenate(
            [panel["speedup"].to_numpy(dtype=float)]
            + [panel[c].to_numpy(dtype=float) for c in ("low", "high") if c in panel]
        )
        values = values[np.isfinite(values)]
        bottom = max(AXIS_LIMITS[0], min(0.8, float(values.min()) / 1.1))
        top = min(AXIS_LIMITS[1], max(1.25, float(values.max()) * 1.1))
        ax.set_yscale("log")
        ax.set_ylim(bottom, top)
        ax.yaxis.set_major_locator(LogLocator(base=2))
        ax.yaxis.set_minor_locator(NullLocator())  # ~20 unlabelled ticks a panel cost its drawing
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:.3g}×"))
        ax.set_ylabel(f"speedup vs {baseline}")

    title = f"Runs compared: {baseline} p50 time / this run's p50 time (> 1: faster)"
    return primitive_mode_figure(ratios, draw, "line; point: the row's state", title)
