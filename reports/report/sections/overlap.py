"""The report's overlap section (`distbench overlap` rows, primitive `overlap`): per case the
compute alone, the collective alone and both at once, and what they come to (overlap efficiency,
each one's slowdown, OSU's overlap %). Overlap rows are not collectives: they stay out of the
collectives' tables, fit and scaling."""

from __future__ import annotations

import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from distbench.reports.render import TableOut, format_number, size_cells
from distbench.reports.report.figures.collectives import STYLE, new_figure, shared_legend
from distbench.reports.report.figures.grid import log_x
from distbench.reports.report.sections.collectives import RowsSection, run_cells

PHASES = {"t_compute_us": "compute alone", "t_comm_us": "collective alone", "t_both_us": "both"}
PHASE_WORDS = ("compute", "comm", "both")
"""The table's names of PHASES."""
NUMBERS = (
    "compute_n", "compute_iters", "compute_threads", "t_compute_us", "t_comm_us", "t_both_us",
    "overlap_efficiency", "compute_slowdown", "comm_slowdown", "osu_overlap_pct",
)  # fmt: skip
"""OverlapRow's own columns that hold numbers (the loader converts ResultRow's only)."""


def overlap_rows(comm: pd.DataFrame) -> pd.DataFrame:
    """The overlap rows, their own columns as numbers, each with a case label."""
    rows = comm[comm["primitive"] == "overlap"].copy()
    if rows.empty:
        return rows
    for column in NUMBERS:
        rows[column] = pd.to_numeric(rows[column], errors="coerce")
    rows["case"] = case_text(rows, ", ") + " (" + rows["run"].astype(str) + ")"
    return rows.sort_values(["run", "collective", "size_bytes", "compute_n", "compute_threads"])


def case_text(rows: pd.DataFrame, between: str) -> pd.Series:
    """'all_reduce 1M<between>N=256, 1 thr': a row's collective and size, then its compute."""
    return (
        rows["collective"].astype(str)
        + " "
        + pd.Series(size_cells(rows), index=rows.index)
        + between
        + "N="
        + rows["compute_n"].astype(int).astype(str)
        + ", "
        + rows["compute_threads"].astype(int).astype(str)
        + " thr"
    )


def case_labels(rows: pd.DataFrame) -> pd.Series:
    """Each row's case in the figure, on up to three short lines ("all_reduce 1M", "N=256,
    1 thr", the run) so the labels leave the bars most of the width: the mode only where the
    rows hold several, the run only where they come from several (a run directory's name is
    ~25 characters)."""
    label = case_text(rows, "\n")
    if rows["mode"].nunique() > 1:
        label = label + ", " + rows["mode"].astype(str)
    if rows["run"].nunique() > 1:
        label = label + "\n" + rows["run"].astype(str)
    return label


CASE_IN = 0.28
"""Height per bar of a case (inches): three bars a case, room for its three-line label."""


def plot_overlap(rows: pd.DataFrame) -> Figure:
    """Per case, the three phases' p50 (slowest rank) side by side; the legend below the panel,
    where it covers no bar."""
    rows = rows.assign(case=case_labels(rows))
    long = rows.melt(id_vars=["case"], value_vars=list(PHASES), var_name="phase", value_name="us")
    long["phase"] = long["phase"].map(PHASES)
    cases = long["case"].nunique()
    with sns.axes_style(STYLE):
        fig = new_figure(1, 1, height=max(2.0, CASE_IN * len(PHASES) * cases))
        ax = fig.subplots()
        sns.barplot(long, y="case", x="us", hue="phase", orient="h", ax=ax)
        if long["us"].max() > 20 * long["us"].min() > 0:  # cases of very different lengths
            log_x(ax, long["us"])
        ax.set_xlabel("p50 of the slowest rank (µs per op)")
        ax.set_ylabel("")
        shared_legend(fig, [ax], "phase")
    return fig


def overlap_table(rows: pd.DataFrame) -> TableOut:
    table = pd.DataFrame(
        {
            **run_cells(rows),
            "collective": rows["collective"].astype(str),
            "size": size_cells(rows),
            "matmul": rows["compute_n"].astype(int).astype(str)
            + "x"
            + rows["compute_iters"].astype(int).astype(str),
            "threads": rows["compute_threads"].astype(int).astype(str),
            "mode": rows["mode"].astype(str),
            **{
                f"{p} µs": rows[c].map(format_number)
                for c, p in zip(PHASES, PHASE_WORDS, strict=True)
            },
            "efficiency": rows["overlap_efficiency"].map(lambda v: format_number(v, 2)),
            "compute slowdown": rows["compute_slowdown"].map(lambda v: format_number(v, 3)),
            "comm slowdown": rows["comm_slowdown"].map(lambda v: format_number(v, 3)),
            "OSU %": rows["osu_overlap_pct"].map(lambda v: format_number(v, 3)),
        }
    )
    numeric = (
        "compute µs",
        "comm µs",
        "both µs",
        "efficiency",
        "compute slowdown",
        "comm slowdown",
        "OSU %",
    )
    return TableOut("Overlap per case (slowest rank, p50)", table, numeric=numeric)


OVERLAP = RowsSection(
    "Communication while computing (overlap)",
    "efficiency = (compute + comm - both) / min(compute, comm): 1 when the shorter is wholly "
    "hidden, 0 when serialised, below 0 when running them together is slower than one after "
    "the other (on CPU gloo's threads and the matmul compete for the cores). The slowdowns "
    "are each one's time inside `both` over its time alone, each by one clock: compute over "
    "`compute µs`; the collective from issue to completion inside `both` over the same span "
    "alone (t_comm_completion_us, not `comm µs`, which adds the wait's return: waking the "
    "waiting thread). OSU % is OSU's "
    "non-blocking overlap figure on the same times (docs/overlap.md).",
    overlap_rows,
    "fig-overlap.png",
    "communication while computing: compute alone, the collective alone and both at once "
    "(issued async_op=True, compute, wait), p50 of the slowest rank per op",
    "overlap: nothing to plot",
    plot_overlap,
    overlap_table,
)
