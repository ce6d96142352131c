"""The report's figures, seaborn on matplotlib's Agg backend (no display, no pyplot state).

Each `plot_*` takes the frames a report prepared and returns a Figure, or None when its data is
not there (the report then says so). Lines are the p50 of the max-over-ranks samples; bands are the
p5-p95 of those samples (samples.csv rank -1), so a band shows the spread a user would see.
"""

# ruff: noqa: RUF001  (labels use Greek letters, the multiplication sign and en dashes on purpose)

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from distbench.parse import format_size
from distbench.reports.report.analysis import series_arrays
from distbench.reports.report.figures.grid import fixed_grid, log_y
from distbench.reports.report.figures.lines import Line, draw_many

STYLE = "whitegrid"
MAX_COLS = 3
PANEL_W, PANEL_H = 4.6, 3.4
MAX_SCALING_SIZES = 6
LINESTYLES = ("-", "--", "-.", ":")
LEGEND_CHAR_IN, LEGEND_ROW_IN = 0.07, 0.2
"""A legend entry's width per character and height per row at fontsize small (inches)."""
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
"""Scaling figures show at most this many sizes (spread over the range) to stay readable."""
TITLE_Y = 1.0
"""Panel titles at the top of the panel, where matplotlib's automatic placement puts them when
no tick label sits above the panel (none do here); given, it skips measuring every y tick label
of ~70 panels at each draw to check (~2 s of a 10,000-row report)."""


def new_figure(
    rows: int, cols: int, width: float = PANEL_W, height: float = PANEL_H, fixed: bool = False
) -> Figure:
    """A figure for rows x cols panels; `fixed`: laid out by grid.fixed_grid (many-panel
    figures), else by constrained layout."""
    size = (width * cols + 1.8, height * rows + 0.6)
    return Figure(figsize=size, layout=None if fixed else "constrained")


def panel_grid(count: int, cols: int = MAX_COLS, fixed: bool = False) -> tuple[Figure, list[Axes]]:
    """`count` panels wrapped into rows of at most `cols` (the page is ~1200 px wide); the spare
    cells of the last row are hidden."""
    cols = max(1, min(cols, count))
    rows = math.ceil(count / cols)
    fig = new_figure(rows, cols, fixed=fixed)
    axes = list(fig.subplots(rows, cols, squeeze=False).flat)
    for ax in axes[count:]:
        ax.set_visible(False)
    return fig, axes[:count]


def size_axis(ax: Axes, sizes: Iterable[float]) -> None:
    """log2 x axis labelled 1K, 64K, 1M ... at powers of two (at most ~8 ticks).

    Powers of two rather than the measured sizes: gather-type sizes are rounded down to whole
    elements per rank (1020 bytes at 3 ranks), which would crowd the axis with near-duplicates.
    """
    ax.set_xscale("log", base=2)
    positive = [float(s) for s in sizes if s > 0]
    low, high = round(math.log2(min(positive))), round(math.log2(max(positive)))
    ticks = [2.0**k for k in range(low, high + 1)]  # from the smallest size's nearest power
    step = max(1, math.ceil(len(ticks) / 8))
    ax.xaxis.set_major_locator(FixedLocator(ticks[::step]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: format_size(round(v))))
    ax.set_xlabel("size (bytes, nccl-tests' convention)")


def shared_legend(fig: Figure, axes: Iterable[Axes], title: str) -> float:
    """One legend for the whole figure, below the panels, from every panel's lines; returns the
    height (inches) it added to the figure.

    Below, not beside: a legend at the right, as wide as its longest name, covered the figure's
    title and squeezed the panels. Its columns fit the figure's width, and the figure grows by
    the legend's height, so the panels keep theirs.
    """
    handles: dict[str, Artist] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=False):
            handles.setdefault(label, handle)
        legend = ax.get_legend()
        if legend is not None:
            legend.remove()
    if not handles:
        return 0.0
    entry_in = 0.55 + LEGEND_CHAR_IN * max(len(label) for label in handles)
    cols = max(1, min(len(handles), int(fig.get_figwidth() // entry_in)))
    rows = math.ceil(len(handles) / cols)
    added = 0.45 + LEGEND_ROW_IN * rows
    fig.set_figheight(fig.get_figheight() + added)
    fig.legend(
        list(handles.values()),
        list(handles.keys()),
        title=title,
        loc="outside lower center",
        ncols=cols,
        fontsize="small",
    )
    return added


def line_palette(names: Iterable[str]) -> dict[str, tuple[float, float, float]]:
    """A colour per line name, no two alike: tab10 up to 10 lines; up to 20, tab20's ten dark
    hues then its ten light ones (neighbours in sorted order differ in hue, where evenly spaced
    hues made them near twins); evenly spaced hues beyond."""
    ordered = sorted({str(n) for n in names})
    if len(ordered) <= 10:
        colors = sns.color_palette("tab10")
    elif len(ordered) <= 20:
        twenty = sns.color_palette("tab20")
        colors = [*twenty[0::2], *twenty[1::2]]
    else:
        colors = sns.husl_palette(len(ordered))
    return {name: tuple(colors[i % len(colors)])[:3] for i, name in enumerate(ordered)}


def line_styles(names: Iterable[str]) -> dict[str, tuple[str, str]]:
    """A (line style, marker) per name, in sorted order, so that neighbours differ in style as
    well as colour (and lines stay apart in grey print)."""
    ordered = sorted({str(n) for n in names})
    return {
        name: (LINESTYLES[i % len(LINESTYLES)], MARKERS[i % len(MARKERS)])
        for i, name in enumerate(ordered)
    }


def draw_lines(
    ax: Axes,
    frame: pd.DataFrame,
    x: str,
    y: str,
    palette: dict[str, tuple[float, float, float]],
    band: tuple[str, str] | None = None,
    entries: set[str] | None = None,
) -> None:
    """One line per `series` (points already aggregated), with an optional shaded band; colour
    from `palette`, style and marker from line_styles over the palette's names; `entries`: as
    lines.draw_many's."""
    styles = line_styles(palette)
    polygons, colors, lines = [], [], []
    arrays = {c: frame[c].to_numpy(dtype=float) for c in (x, y, *(band or ()))}
    positions = frame.groupby("series", sort=True).indices  # arrays, not a frame per line
    for name in sorted(positions, key=str):
        at = positions[name][np.argsort(arrays[x][positions[name]], kind="quicksort")]
        color = palette[str(name)]
        style, marker = styles[str(name)]
        lines.append(Line(arrays[x][at], arrays[y][at], color, style, marker, 4, label=str(name)))
        if band is not None:
            polygons.append(band_polygon(*(arrays[c][at] for c in (x, *band))))
            colors.append(color)
    draw_many(ax, lines, entries)
    if polygons:
        ax.add_collection(PolyCollection(polygons, facecolors=colors, alpha=0.18, linewidths=0))


def band_polygon(xs: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The outline of a band between `low` and `high` along `xs` (sorted): what fill_between
    draws, built directly (fill_between's checks cost ~4 ms a band: 1,000 bands in a big report).
    Points where any of the three is missing are left out of the band."""
    keep = np.isfinite(xs) & np.isfinite(low) & np.isfinite(high)
    xs, low, high = xs[keep], low[keep], high[keep]
    return np.column_stack([np.concatenate([xs, xs[::-1]]), np.concatenate([low, high[::-1]])])


def primitive_mode_figure(
    frame: pd.DataFrame, draw: Callable[[Axes, pd.DataFrame], None], legend: str, title: str
) -> Figure:
    """One panel per primitive x mode of `frame` (sorted, wrapped by panel_grid, each titled
    `primitive · mode` and filled by `draw(ax, its rows)`), one legend below titled `legend`."""
    panels = list(frame.groupby(["primitive", "mode"], sort=True))
    with sns.axes_style(STYLE):
        fig, axes = panel_grid(len(panels), fixed=True)
        for ax, ((primitive, mode), panel) in zip(axes, panels, strict=False):
            ax.set_title(f"{primitive} · {mode}", fontsize="medium", y=TITLE_Y)
            draw(ax, panel)
        legend_in = shared_legend(fig, axes, legend)
        cols = min(MAX_COLS, len(panels))
        fixed_grid(fig, math.ceil(len(panels) / cols), cols, title, legend_in)
    return fig


def plot_vs_size(points: pd.DataFrame, metric: str, ylabel: str, title: str) -> Figure | None:
    """p50 line and p5-p95 band vs size; one panel per primitive x mode.

    `points`: one row per sample (or per measurement without samples) with primitive, mode,
    series, size_bytes and `metric`.
    """
    if points.empty:
        return None
    # One vectorised groupby for every line and band (seaborn's estimator runs per group in
    # Python: minutes at 10,000 rows). Linear interpolation, as distbench.stats.
    quantiles = (
        points.groupby(["mode", "primitive", "series", "size_bytes"])[metric]
        .quantile(np.array([0.05, 0.5, 0.95]))
        .unstack()
        .set_axis(["p5", "p50", "p95"], axis=1)
        .reset_index()
    )
    palette = line_palette(quantiles["series"].unique())
    entries: set[str] = set()  # one legend entry per line for the figure's one legend

    def draw(ax: Axes, panel: pd.DataFrame) -> None:
        draw_lines(ax, panel, "size_bytes", "p50", palette, band=("p5", "p95"), entries=entries)
        size_axis(ax, panel["size_bytes"].unique())
        log_y(ax, panel[["p5", "p50", "p95"]].to_numpy().ravel())
        ax.set_ylabel(ylabel)

    return primitive_mode_figure(quantiles, draw, "line", title)


def plot_fit(lines: pd.DataFrame, fits: pd.DataFrame) -> Figure | None:
    """Each line's p50 times (points) and its fitted t = alpha + size / beta (dashed), log-log;
    one panel per primitive x mode. `fits`: analysis.fit_table (with `series`)."""
    if fits.empty or "series" not in fits.columns:
        return None
    palette = line_palette(fits["series"].unique())
    keys = [lines["primitive"], lines["mode"], lines["series"].astype(str), lines["size_bytes"]]
    by_size = lines.groupby(keys)["time_us_p50"].median()  # one pass for every line and size
    medians: dict[Any, pd.Series] = {
        key: part.droplevel([0, 1, 2]) for key, part in by_size.groupby(level=[0, 1, 2])
    }
    entries: set[str] = set()  # one legend entry per line for the figure's one legend

    def draw(ax: Axes, panel: pd.DataFrame) -> None:
        primitive, mode = panel["primitive"].iloc[0], panel["mode"].iloc[0]
        shown, drawn = [], []
        for series, alpha, beta in zip(
            panel["series"].astype(str), panel["alpha_us"], panel["beta_GBps"], strict=True
        ):
            p50 = medians.get((primitive, mode, series))
            if p50 is None:
                continue
            color = palette[series]
            x = p50.index.to_numpy(dtype=float)
            drawn.append(Line(x, p50.to_numpy(dtype=float), color, "", "o", 4, label=series))
            sizes = np.geomspace(max(float(p50.index.min()), 1.0), float(p50.index.max()), 64)
            slope = 0.0 if math.isinf(float(beta)) else 1e-3 / float(beta)
            drawn.append(Line(sizes, float(alpha) + slope * sizes, color, "--", width=1))
            shown += [*p50.to_numpy(), float(alpha) + slope * sizes[0]]
        draw_many(ax, drawn, entries)
        size_axis(ax, lines.loc[lines["primitive"] == primitive, "size_bytes"].unique())
        log_y(ax, shown)
        ax.set_ylabel("time p50 (µs)")

    legend = "line (points) · fit (dashed)"
    title = "Model fit: t = α + size / β against the measured p50 times"
    return primitive_mode_figure(fits, draw, legend, title)


def plot_scaling(rows: pd.DataFrame) -> Figure | None:
    """p50 time (left) and busbw (right) vs world size at a few sizes, a row per `panel` (primitive
    and mode: analysis.scaling_rows). A line is a size of one `line` (source, dtype and any other
    case column that differs): each has a colour of its own, and a style per `line`.
    """
    if rows.empty:
        return None
    panels = sorted(rows["panel"].unique())
    lines = sorted(rows["line"].unique())
    rows = rows.assign(
        series=rows["size"] + (" · " + rows["line"] if len(lines) > 1 else ""),
        size_rank=rows["requested_bytes"].rank(method="dense").astype(int) - 1,
    )
    palette = line_palette(rows["series"])
    order = rows.sort_values(["line", "requested_bytes"])["series"].drop_duplicates().tolist()
    with sns.axes_style(STYLE):
        fig = new_figure(len(panels), 2, fixed=True)
        axes = fig.subplots(len(panels), 2, squeeze=False)
        by_panel = dict(list(rows.groupby("panel", sort=False)))
        for i, panel in enumerate(panels):
            at = by_panel[panel]
            series = series_arrays(
                at, ("world_size", "time_us_p50", "busbw_GBps", "line", "size_rank")
            )
            for j, (metric, label) in enumerate(
                (("time_us_p50", "time p50 (µs)"), ("busbw_GBps", "busbw (GB/s)"))
            ):
                ax = axes[i][j]
                drawn = [
                    Line(line["world_size"], line[metric], palette[name],
                         LINESTYLES[lines.index(line["line"][0]) % len(LINESTYLES)],
                         MARKERS[int(line["size_rank"][0]) % len(MARKERS)], 4, label=name)
                    for name in order if name in series for line in (series[name],)
                ]  # fmt: skip
                draw_many(ax, drawn)
                ax.set_xticks(sorted(at["world_size"].unique()))
                ax.set_xlabel("world size (ranks)")
                ax.set_ylabel(label)
                if metric == "time_us_p50":
                    log_y(ax, at[metric])
                ax.set_title(panel, fontsize="medium", y=TITLE_Y)
        legend_in = shared_legend(fig, axes.flat, "size · line" if len(lines) > 1 else "size")
        fixed_grid(fig, len(panels), 2, "Scaling with world size", legend_in)
    return fig
