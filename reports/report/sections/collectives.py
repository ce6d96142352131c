"""The report's sections below "What ran": collectives (with the model fit) and DDP (the pairs:
pairs.py), as tables of display strings and PNG figures. report/page/build.py assembles them.

Every table groups rows by the schema's case columns (analysis.CASE), so each shows `device` and
`nodes`: gloo on CPU and on CUDA, or one node and two, are separate lines.
"""

# ruff: noqa: RUF001  (labels use Greek letters, the multiplication sign and en dashes on purpose)

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from distbench.reports.kinds import CASE_DEFAULTS
from distbench.reports.load import Loaded
from distbench.reports.render import FigureOut, Section, TableOut, format_number, size_cells
from distbench.reports.report import analysis as an
from distbench.reports.report.figures import collectives as fg
from distbench.reports.report.figures.drawing import Build, draw, later
from distbench.reports.report.fit import MAX_REL_RMS
from distbench.reports.report.sections.fit import fit_cells, fit_section
from distbench.reports.report.shown import Panel, of_dtype

HTML_ROW_LIMIT = 5000
"""The full results table in report.html stops here (report.md never lists every row)."""


QUIET_DEFAULTS = {c: CASE_DEFAULTS[c] for c in ("placement", "graph", "buffers")}
"""Case columns shown only where a row differs from this value (every row before v3's)."""


FOLDED = ("backend", "device", "nnodes", "dtype", "op", "mode")
"""Case columns that, holding one value in every row of a table of several, leave the table for
its note (`every row: gloo, cpu, 1 node(s), float32`): a report's wide tables scrolled sideways
and hid the verdict at their right edge behind columns that told no row apart."""


def display(
    frame: pd.DataFrame,
    names: dict[str, str],
    numeric: tuple[str, ...] = (),
    folded: tuple[str, ...] = FOLDED,
) -> TableOut:
    """Rename and format a frame for display; columns that are empty everywhere are dropped, and
    `folded` columns with one value in every row go into the table's note."""
    frame = frame[[c for c in names if c in frame.columns]].copy()
    said = []
    if len(frame) > 1:
        for column in (c for c in folded if c in frame.columns):
            values = frame[column].astype(str)
            if values.nunique() == 1 and values.iloc[0] not in ("", "nan"):
                label = an.SERIES_LABELS.get(column, "{}").format(values.iloc[0])
                said.append(label)
                frame = frame.drop(columns=column)
    for column in list(frame.columns):
        values = frame[column]
        quiet = "" if not pd.api.types.is_numeric_dtype(values) else None
        quiet = QUIET_DEFAULTS.get(column, quiet)  # placement: shown only where a row says in
        if quiet is not None and (values.astype(str) == quiet).all():
            frame = frame.drop(columns=column)
        elif column in numeric:
            frame[column] = values.map(format_number)
        else:
            frame[column] = values.astype(str)
    shown = [names[c] for c in frame.columns]
    frame.columns = pd.Index(shown)
    note = f"every row: {', '.join(said)}" if said else ""
    return TableOut("", frame, note, tuple(names[c] for c in numeric if names[c] in shown))


def checked_text(rows: pd.DataFrame) -> pd.DataFrame:
    """`wrong` as a reader takes it: -1 (the schema's "not checked": no --check) reads "not
    checked", as the terminal's N/A, not as a count."""
    if "wrong" not in rows.columns:
        return rows
    wrong = pd.to_numeric(rows["wrong"], errors="coerce")
    text = wrong.map(lambda n: "not checked" if n < 0 or n != n else str(int(n)))
    return rows.assign(wrong=text)


def titled(table: TableOut, title: str, note: str = "", **extra: Any) -> TableOut:
    """The table under `title`; `note` after the columns display() folded (its own note)."""
    both = " ".join(part for part in (table.note + "." if table.note else "", note) if part)
    return TableOut(title, table.frame, both, numeric=table.numeric, **extra)


CASE_NAMES = {
    "source": "source",
    "primitive": "primitive",
    "strategy": "strategy",
    "backend": "backend",
    "device": "device",
    "world_size": "ranks",
    "nnodes": "nodes",
    "mode": "mode",
    "dtype": "dtype",
    "op": "op",
    "root": "root",
    "pattern": "pattern",
    "src": "src",
    "dst": "dst",
    "placement": "placement",
    "graph": "graph",
    "buffers": "buffers",
    "env": "env",
}


def figure_out(
    figure: Figure | Build | None, name: str, caption: str, notes: list[str], why: str
) -> list[FigureOut]:
    """The figure (or the figure to build, drawing.later) as the section's PNG, drawn beside
    the rest of the report; None: no figure, and `why` goes into the notes."""
    if figure is None:
        notes.append(why)
        return []
    return [FigureOut(name, caption, draw(figure))]  # drawn beside the rest (drawing.py)


def run_cells(rows: pd.DataFrame) -> dict[str, pd.Series]:
    """The first two columns of a kind's own table: its run and its world size."""
    return {"run": rows["run"], "ranks": rows["world_size"].astype(str)}


@dataclass(frozen=True)
class RowsSection:
    """The section of one kind of row that is no collective (init, rpc, overlap): one figure
    (or a note saying why none) and one table, from the kind's own rows."""

    title: str
    text: str
    rows: Callable[[pd.DataFrame], pd.DataFrame]
    """The kind's rows out of the communication rows (empty: no section)."""
    figure: str
    """The PNG's file name."""
    caption: str
    missing: str
    """The note when `plot` gives no figure."""
    plot: Callable[[pd.DataFrame], Figure | None]
    table: Callable[[pd.DataFrame], TableOut]

    def render(self, comm: pd.DataFrame, notes: list[str]) -> list[Section]:
        """Nothing without rows of the kind."""
        rows = self.rows(comm)
        if rows.empty:
            return []
        figures = figure_out(self.plot(rows), self.figure, self.caption, notes, self.missing)
        return [Section(self.title, self.text, figures, [self.table(rows)])]


def section_collectives(
    loaded: Loaded, lines: pd.DataFrame, notes: list[str], dtypes: dict[Panel, str] | None = None
) -> list[Section]:
    """The collectives' figures, key results, fit and every row; `dtypes`: the crowded panels'
    one dtype (shown.figure_dtypes), the tables keep every dtype."""
    if lines.empty:
        return []
    drawn = of_dtype(lines, dtypes or {})
    points = an.sample_points(drawn, loaded.samples)
    figures = figure_out(
        later(
            not points.empty,
            fg.plot_vs_size,
            *(points, "time_us", "time (µs)", "Time vs size (p50, band p5–p95)"),
        ),
        "fig-time-vs-size.png",
        "p50 time of the max-over-ranks samples; band: their p5–p95 (min–max with few samples)",
        notes,
        "time vs size: no rows",
    )
    positive = points[points["busbw_GBps"] > 0]
    figures += figure_out(
        later(
            not positive.empty,
            fg.plot_vs_size,
            *(positive, "busbw_GBps", "busbw (GB/s)", "Bus bandwidth vs size"),
        ),
        "fig-busbw-vs-size.png",
        "busbw = size / time × factor (nccl-tests), GB/s = 1e9 B/s; band from the same samples",
        notes,
        "busbw vs size: every row is at world size 1, where nothing moves (no bandwidth)",
    )
    scaling = an.scaling_rows(drawn, fg.MAX_SCALING_SIZES)
    figures += figure_out(
        later(not scaling.empty, fg.plot_scaling, scaling),
        "fig-scaling.png",
        "p50 time and busbw at each world size, for a few sizes",
        notes,
        "scaling vs world size: no primitive was measured at two or more world sizes",
    )
    summary = display(
        an.summary_table(lines),
        {
            **CASE_NAMES,
            "sizes": "sizes",
            "small": "smallest",
            "small_p50_us": "p50 µs (smallest)",
            "large": "largest",
            "large_p50_us": "p50 µs (largest)",
            "large_busbw_GBps": "busbw GB/s (largest)",
            "peak_busbw_GBps": "peak busbw GB/s",
        },
        ("small_p50_us", "large_p50_us", "large_busbw_GBps", "peak_busbw_GBps"),
    )
    fits = an.fit_table(lines)
    fitted = of_dtype(fits[~fits["noise"].astype(bool)], dtypes or {})
    figures_fit = figure_out(
        later(not fitted.empty and "series" in fitted.columns, fg.plot_fit, drawn, fitted),
        "fig-fit.png",
        "p50 times (points) and the fitted t = α + size / β (dashed) of every line",
        notes,
        f"model fit: every line's fit is noise (rel. RMS above {MAX_REL_RMS:.0%}), so none is "
        "drawn; the table gives each line's figures"
        if not fits.empty
        else "model fit: no line has two or more sizes",
    )
    fit = display(
        fit_cells(fits),
        {
            **CASE_NAMES,
            "alpha_us": "α µs",
            "alpha_from": "α from sizes",
            "beta_GBps": "β GB/s",
            "beta_from": "β from sizes",
            "busbw_beta_GBps": "β × busbw factor GB/s",
            "rel_rms": "rel. RMS",
            "rel_max": "rel. max",
            "points": "sizes",
        },
        ("alpha_us", "beta_GBps", "busbw_beta_GBps", "rel_rms", "rel_max"),  # text kept as is
    )
    every = loaded.comm.sort_values(["source", "primitive", "world_size", "mode", "size_bytes"])
    every = checked_text(every.head(HTML_ROW_LIMIT))
    all_rows = display(
        every.assign(size=size_cells(every)),
        {
            **CASE_NAMES,
            "size": "size",
            "hosts": "hosts",
            "timer": "timer",
            "time_us_p50": "p50 µs",
            "time_us_p95": "p95 µs",
            "time_us_min": "min µs",
            "time_us_max": "max µs",
            "algbw_GBps": "algbw GB/s",
            "busbw_GBps": "busbw GB/s",
            "samples": "samples",
            "wrong": "wrong",
        },
        ("time_us_p50", "time_us_p95", "time_us_min", "time_us_max", "algbw_GBps", "busbw_GBps"),
    )
    total = len(loaded.comm)
    cut = f" (the first {HTML_ROW_LIMIT} of {total})" if total > HTML_ROW_LIMIT else ""
    fitted_table = titled(fit, "Latency-bandwidth fit")
    model_fit = [] if fits.empty else [fit_section(figures_fit, fitted_table)]  # else a note
    return [
        Section(
            "Collectives and point-to-point",
            "Times are the p50 over samples of the slowest rank (max over ranks per sample). "
            "— marks an empty cell: bandwidth at world size 1, where nothing moves, and p95 in "
            "throughput mode, where a sample is a mean of back-to-back ops, not one op.",
            figures=figures,
            tables=[titled(summary, "Key results")],
        ),
        *model_fit,
        Section(
            "Every row",
            tables=[
                titled(all_rows, f"All results{cut}", markdown=False, collapsed=True),
            ],
        ),
    ]
