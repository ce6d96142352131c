"""A fixed grid for the report's many-panel figures: margins in inches instead of matplotlib's
constrained layout.

Constrained layout measures every tick label of every panel at each draw: with ~70 panels in a
10,000-row report that was a third of the report's drawing time (docs/performance.md). The
panels of these figures have the same kinds of labels (a size or world-size x axis, a log time or
a bandwidth y axis, a one-line title), so fixed margins wide enough for those labels hold them.
tests/unit/reports/test_figure_grid.py checks, on real and on crowded figures, that no panel's
labels reach into another panel, the legend or the figure's title, and that all of them stay inside.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

LEFT_IN, RIGHT_IN = 1.0, 0.25
"""Room for the y tick labels ("5e4", "0.002") and the y label, and a right edge."""
TOP_IN, TITLE_IN = 0.8, 0.1
"""Room for the figure's title and the first row's panel titles; the title's distance from the
top."""
TITLE_MIN_PT, CHAR_EM = 6.0, 0.6
"""The smallest title (points) a long one shrinks to; a character's width in ems (title_size)."""
BOTTOM_IN = 0.65
"""Room for the last row's x tick labels and x label, above the legend."""
W_GAP_IN, H_GAP_IN = 1.0, 0.95
"""Between panels: a panel's y labels; a row's x labels and the next row's titles."""


def fixed_grid(fig: Figure, rows: int, cols: int, title: str, legend_in: float = 0.0) -> None:
    """Lay out the figure's rows x cols subplot grid with the margins above, under `title` (a
    fixed distance from the top: a fraction of a tall figure's height would reach its panels);
    `legend_in`: the height a figure legend below the panels takes (shared_legend's return)."""
    width, height = fig.get_size_inches()
    fig.suptitle(title, y=1 - TITLE_IN / height, va="top", fontsize=title_size(title, width))
    panel_w = (width - LEFT_IN - RIGHT_IN - (cols - 1) * W_GAP_IN) / cols
    panel_h = (height - TOP_IN - BOTTOM_IN - legend_in - (rows - 1) * H_GAP_IN) / rows
    fig.subplots_adjust(
        left=LEFT_IN / width,
        right=1 - RIGHT_IN / width,
        top=1 - TOP_IN / height,
        bottom=(BOTTOM_IN + legend_in) / height,
        wspace=W_GAP_IN / panel_w,
        hspace=H_GAP_IN / panel_h,
    )


def title_size(title: str, width_in: float) -> float:
    """The title's font size (points): matplotlib's "large" (12), smaller where a long title (a
    run directory's name in it) would leave a narrow figure, down to TITLE_MIN_PT; a character
    is taken as CHAR_EM of the size wide (DejaVu Sans averages about 0.55)."""
    room = (width_in - 2 * RIGHT_IN) * 72.0 / (CHAR_EM * max(len(title), 1))
    return max(TITLE_MIN_PT, min(12.0, room))


def log_y(ax: Axes, values: Iterable[float]) -> None:
    """log10 y axis labelled by tick_text at decades, or at 1-2-5 steps when the data span
    under two decades, and no minor ticks.

    The default log axis made ~30 minor ticks per panel and mathtext labels: at ~130 panels
    that was most of a 10,000-row report's drawing time (docs/performance.md).
    """
    ax.set_yscale("log")
    log_ticks(ax.yaxis, values)


def log_x(ax: Axes, values: Iterable[float]) -> None:
    """log10 x axis labelled as log_y's y axis ("2000", "1e4", not mathtext's 10^4)."""
    ax.set_xscale("log")
    log_ticks(ax.xaxis, values)


def log_ticks(axis: Axis, values: Iterable[float]) -> None:
    """A log axis's ticks for `values`: decades, or 1-2-5 steps under two decades, labelled by
    tick_text; no minor ticks."""
    positive = [float(v) for v in values if v > 0 and math.isfinite(v)]
    if positive:
        low, high = math.floor(math.log10(min(positive))), math.ceil(math.log10(max(positive)))
        steps = (1.0, 2.0, 5.0) if high - low <= 2 else (1.0,)
        ticks = [m * 10.0**k for k in range(low, high + 1) for m in steps]
        inside = [t for t in ticks if min(positive) <= t <= max(positive)]
        if len(inside) < 2:  # values within one step (110-190 us): label their own ends too
            ticks = sorted({*ticks, *(float(f"{v:.2g}") for v in (min(positive), max(positive)))})
        axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: tick_text(v)))


def tick_text(value: float) -> str:
    """A log axis's label: plain from 0.001 to 9999 ("0.002", "50", "2000"), else "2e4", "1e-5"
    (matplotlib's "%g" switches form mid-axis: "100000" beside "1e+06")."""
    if value <= 0 or 1e-3 <= value < 1e4:
        return f"{value:g}"
    exponent = math.floor(math.log10(value))
    return f"{value / 10**exponent:.3g}e{exponent}"
