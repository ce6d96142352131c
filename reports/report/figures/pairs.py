"""The pair figures of a report: the pair matrix as a heatmap (rank x rank or node x node) with
the outliers of ranks.csv marked, and each rank's busbw with a healthy partner as bars. Same
conventions as collectives.py."""

from __future__ import annotations

import math

import numpy as np
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from distbench.reports.report.figures.collectives import STYLE, new_figure
from distbench.reports.report.pairs import PairMatrix

OUTLIER_COLOUR = "tab:red"


def mark_outliers(ax: Axes, matrix: PairMatrix) -> None:
    """Outline an outlier's row and column and name it in red on both axes."""
    size = len(matrix.matrix)
    labels = [str(u) for u in matrix.matrix.index]
    for unit in matrix.outliers:
        at = labels.index(unit)
        for x, y, w, h in ((0, at, size, 1), (at, 0, 1, size)):
            ax.add_patch(Rectangle((x, y), w, h, fill=False, lw=2.5, ec=OUTLIER_COLOUR))
    for tick in [*ax.get_xticklabels(), *ax.get_yticklabels()]:
        if tick.get_text() in matrix.outliers:
            tick.set_color(OUTLIER_COLOUR)
            tick.set_fontweight("bold")


def plot_pairs(matrices: list[PairMatrix]) -> Figure | None:
    """Pair heatmaps: algbw (send/recv) or busbw (all_reduce) of each pair, GB/s, src down, dst
    across; one colour scale for all."""
    if not matrices:
        return None
    cols = min(4, len(matrices))
    # One colour scale for every panel, so clusters and world sizes compare by colour too.
    values = np.concatenate([m.matrix.to_numpy().ravel() for m in matrices])
    vmin, vmax = float(np.nanmin(values)), float(np.nanmax(values))
    rows = math.ceil(len(matrices) / cols)
    with sns.axes_style("white"):
        fig = new_figure(rows, cols, width=4.2, height=3.6)
        axes = list(fig.subplots(rows, cols, squeeze=False).flat)
        for ax, matrix in zip(axes, matrices, strict=False):
            sns.heatmap(
                matrix.matrix,
                annot=len(matrix.matrix) <= 12,
                fmt=".3g",
                cmap="viridis",
                vmin=vmin,
                vmax=vmax,
                cbar_kws={"label": f"{matrix.value} (GB/s)"},
                ax=ax,
            )
            mark_outliers(ax, matrix)
            ax.set_xlabel(f"dst {matrix.axis}")
            ax.set_ylabel(f"src {matrix.axis}")
            both = "\n(symmetric: one measurement per pair, both ways)" if matrix.symmetric else ""
            outliers = f"\noutliers (red): {', '.join(matrix.outliers)}" if matrix.outliers else ""
            ax.set_title(matrix.title + both + outliers, fontsize="medium")
        for ax in axes[len(matrices) :]:
            ax.set_visible(False)
        fig.suptitle("Every pair (empty: not measured)")
    return fig


def plot_rank_bars(matrices: list[PairMatrix]) -> Figure | None:
    """Each rank's (node's) busbw with a healthy partner (ranks.csv), outliers in red, the median
    over ranks dashed; None when no matrix has standings."""
    shown = [m for m in matrices if not m.standings.empty]
    if not shown:
        return None
    cols = min(3, len(shown))
    rows = math.ceil(len(shown) / cols)
    with sns.axes_style(STYLE):
        fig = new_figure(rows, cols, width=4.6, height=3.2)
        axes = list(fig.subplots(rows, cols, squeeze=False).flat)
        for ax, matrix in zip(axes, shown, strict=False):
            table = matrix.standings
            colours = [OUTLIER_COLOUR if o else "tab:blue" for o in table["outlier"]]
            ax.bar(table["unit"].astype(str), table["busbw_GBps"], color=colours)
            ax.axhline(float(table["busbw_GBps"].median()), color="0.3", ls="--", lw=1)
            ax.set_xlabel(matrix.axis)
            ax.set_ylabel("busbw with a healthy partner (GB/s)")
            ax.set_title(matrix.title, fontsize="medium")
        for ax in axes[len(shown) :]:
            ax.set_visible(False)
        fig.suptitle("Each rank's pairs (red: outlier; dashed: median over ranks)")
    return fig
