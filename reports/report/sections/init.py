"""The report's start-up section (`distbench init` rows, primitive `init`): each phase's time vs
world size, one line per init method (and run), and the table behind it."""

from __future__ import annotations

import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from distbench.reports.render import TableOut, format_number
from distbench.reports.report.figures.collectives import (
    STYLE,
    draw_lines,
    line_palette,
    panel_grid,
    shared_legend,
)
from distbench.reports.report.sections.collectives import RowsSection

PHASE_ORDER = ("init_process_group", "first_collective", "new_groups", "destroy_process_group")


def init_rows(comm: pd.DataFrame) -> pd.DataFrame:
    """The init rows with their method and phase split out of `pattern` (METHOD:PHASE)."""
    rows = comm[comm["primitive"] == "init"].copy()
    if rows.empty:
        return rows
    split = rows["pattern"].astype(str).str.split(":", n=1, expand=True)
    rows["method"], rows["phase"] = split[0], split[1]
    rows["series"] = rows["method"] + rows["run"].map(lambda r: f" ({r})")
    rows["p50_ms"] = rows["time_us_p50"] / 1e3
    order = {phase: i for i, phase in enumerate(PHASE_ORDER)}  # as they happen, not by name
    rows["phase_order"] = rows["phase"].map(lambda p: order.get(p, len(order)))
    ordered = rows.sort_values(["phase_order", "method", "run", "world_size"])
    return ordered.drop(columns="phase_order")


def plot_startup(rows: pd.DataFrame) -> Figure | None:
    """One panel per phase: the slowest rank's p50 (ms) vs world size, a line per method (a
    colour, style and marker each, the same in every panel), one legend below the panels."""
    phases = [p for p in PHASE_ORDER if p in set(rows["phase"])]
    if not phases:
        return None
    points = (  # one point per line and world size (the mean, as seaborn's lineplot drew it)
        rows.groupby(["phase", "series", "world_size"], observed=True)["p50_ms"]
        .mean()
        .reset_index()
    )
    palette = line_palette(points["series"])
    entries: set[str] = set()  # one legend entry per line for the figure's one legend
    with sns.axes_style(STYLE):
        fig, axes = panel_grid(len(phases))
        for ax, phase in zip(axes, phases, strict=False):
            part = points[points["phase"] == phase]
            draw_lines(ax, part, "world_size", "p50_ms", palette, entries=entries)
            ax.set_title(phase)
            ax.set_xlabel("ranks")
            ax.set_ylabel("slowest rank, p50, ms")
            ax.set_xticks(sorted(set(part["world_size"].astype(int))))
        shared_legend(fig, axes, "init method (run)")
    return fig


def init_table(rows: pd.DataFrame) -> TableOut:
    table = rows[["run", "backend", "method", "phase", "world_size", "trials"]].copy()
    for stat in ("p50", "min", "max"):
        table[f"{stat} ms"] = (rows[f"time_us_{stat}"] / 1e3).map(format_number)
    table.columns = pd.Index([str(c) for c in table.columns])
    return TableOut(
        "Start-up phases (slowest rank per fresh group)",
        table.astype(str),
        numeric=("p50 ms", "min ms", "max ms"),
    )


INIT = RowsSection(
    "Process-group start-up",
    "",
    init_rows,
    "fig-init-startup.png",
    "process-group start-up: each phase's p50 over --trials fresh groups of the slowest "
    "rank's time, ms, vs world size, one line per init method",
    "init: no phase to plot",
    plot_startup,
    init_table,
)
