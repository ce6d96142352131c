"""The report's RPC section (`distbench rpc` rows, primitive `rpc`): time per call and calls/s per
pattern vs tensor size, and the table behind it. RPC rows are not collectives: they stay out of
the collectives' tables, fit and scaling."""

from __future__ import annotations

import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from distbench.reports.render import TableOut, format_number, size_cells
from distbench.reports.report.figures.collectives import (
    STYLE,
    draw_lines,
    line_palette,
    new_figure,
    shared_legend,
    size_axis,
)
from distbench.reports.report.figures.grid import log_y
from distbench.reports.report.sections.collectives import RowsSection, run_cells


def rpc_rows(comm: pd.DataFrame) -> pd.DataFrame:
    """The rpc rows, one line per run x ranks x pattern, with calls/s = 1e6 / p50 µs per call."""
    rows = comm[comm["primitive"] == "rpc"].copy()
    if rows.empty:
        return rows
    ranks = rows["world_size"].astype(str) + " ranks"
    rows["series"] = rows["pattern"].astype(str) + ", " + ranks + " (" + rows["run"] + ")"
    rows["calls_per_s"] = 1e6 / rows["time_us_p50"]
    return rows.sort_values(["run", "world_size", "pattern", "size_bytes"])


def plot_rpc(rows: pd.DataFrame) -> Figure | None:
    """p50 time per call vs tensor size, a line per pattern (a figure needs two sizes), drawn as
    the collectives' time figure draws its lines: a colour, style and marker each, sizes as 1K,
    plain time labels, one legend below the panel."""
    if rows["size_bytes"].nunique() < 2:
        return None
    points = (  # one point per line and size (the mean, as seaborn's lineplot drew it)
        rows.groupby(["series", "size_bytes"], observed=True)["time_us_p50"].mean().reset_index()
    )
    with sns.axes_style(STYLE):
        fig = new_figure(1, 1)
        ax = fig.subplots()
        draw_lines(ax, points, "size_bytes", "time_us_p50", line_palette(points["series"]))
        size_axis(ax, points["size_bytes"])
        log_y(ax, points["time_us_p50"])
        ax.set_ylabel("time per call, p50 (µs)")
        shared_legend(fig, [ax], "pattern, ranks (run)")
    return fig


def rpc_table(rows: pd.DataFrame) -> TableOut:
    table = pd.DataFrame(
        {
            **run_cells(rows),
            "pattern": rows["pattern"].astype(str),
            "mode": rows["mode"].astype(str),
            "size": size_cells(rows),
            "p50 µs": rows["time_us_p50"].map(format_number),
            "calls/s": rows["calls_per_s"].map(format_number),
            "algbw GB/s": rows["algbw_GBps"].map(format_number),
        }
    )
    return TableOut(
        "RPC calls (rank 0's callers; latency: one call, throughput: per call of a window)",
        table,
        numeric=("p50 µs", "calls/s", "algbw GB/s"),
    )


RPC = RowsSection(
    "RPC",
    "Time per call over TensorPipe: sync is one rpc_sync echo, async a call of --window in "
    "flight, rref remote() + to_here(), ps a parameter-server step at rank 0. "
    "calls/s = 1e6 / p50 µs.",
    rpc_rows,
    "fig-rpc.png",
    "torch.distributed.rpc: p50 time per call vs tensor size, a line per pattern and ranks",
    "rpc: every row has one tensor size",
    plot_rpc,
    rpc_table,
)
