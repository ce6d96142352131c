"""fig-compare: the speedup of every source over the baseline vs size, with its 95 % interval
(uncertainty.judge_speedups) as a band; rows called faster or slower are filled points, the
indistinguishable ones hollow grey rings, so only the filled points are findings.
"""

# ruff: noqa: RUF001, RUF002  (the multiplication sign on purpose)

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from distbench.reports.figures import line_palette, primitive_mode_figure, size_axis
from distbench.reports.uncertainty import FASTER, SLOWER

AXIS_LIMITS = (1 / 16, 16.0)
"""The speedup axis never spans more than these (an interval wider than that runs off it)."""


def plot_ratios(ratios: pd.DataFrame, baseline: str) -> Figure | None:
    """Speedup (baseline p50 / this p50) vs size with its interval; one panel per primitive x
    mode; log axis, so 2× faster and 2× slower are as far from 1."""
    if ratios.empty:
        return None
    palette = line_palette(ratios["series"].unique())

    def draw(ax: Axes, panel: pd.DataFrame) -> None:
        for name, line in panel.groupby("series", sort=True):
            line = line.sort_values("size_bytes")
            color = palette[str(name)]
            x = line["size_bytes"].to_numpy(dtype=float)
            ax.plot(x, line["speedup"], color=color, linewidth=1.2, label=str(name))
            if "low" in line:
                low = line["low"].clip(*AXIS_LIMITS)
                high = line["high"].clip(*AXIS_LIMITS)
                ax.fill_between(x, low, high, color=color, alpha=0.2, linewidth=0)
            called = line["verdict"].isin((FASTER, SLOWER)) if "verdict" in line else None
            if called is None:
                called = pd.Series(True, index=line.index)
            ax.plot(x[called.to_numpy()], line.loc[called, "speedup"], "o", color=color)
            ax.plot(
                x[~called.to_numpy()], line.loc[~called, "speedup"], "o", markersize=6,
                markerfacecolor="white", markeredgecolor="grey",
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
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:.3g}×"))
        ax.set_ylabel(f"speedup vs {baseline}")

    title = f"Runs compared: {baseline} p50 time / this run's p50 time (> 1: faster)"
    return primitive_mode_figure(ratios, draw, "line", title)  # bands, hollow points: the caption
