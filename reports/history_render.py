"""history's outputs: the terminal table of change points (newest first), history.csv with every
point, history.md and the self-contained history.html (reports/render.py's page, one trend panel
per case from reports/history_figures.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from distbench import tables
from distbench.reports.history import ChangePoint, History
from distbench.reports.history_detect import ALPHA
from distbench.reports.render import CSS, TableOut, format_number, html_table, markdown_table

CSV_COLUMNS = (
    "run",
    "run_dir",
    "started_utc",
    "git_sha",
    "schema_version",
    "kind",
    "case",
    "metric",
    "value",
    "low",
    "high",
    "segment",
    "change_point",
)
"""history.csv: one line per point. change_point: regression / improvement at the first run after
a change point, else empty; segment: the part of the series since the last definition change."""
HEADER = (
    "run",
    "date",
    "revision",
    "case",
    "metric",
    "before",
    "after",
    "change",
    "direction",
    "q",
    "nights",
)
NUMERIC = ("before", "after", "change", "q", "nights")


@dataclass(frozen=True)
class HistoryFiles:
    html: Path
    markdown: Path
    csv: Path
    panels: int


def cells(cp: ChangePoint) -> list[str]:
    date, _, revision = cp.run.label.partition(" ")
    return [
        cp.run.name,
        date,
        revision,
        cp.case,
        cp.metric,
        format_number(cp.before),
        format_number(cp.after),
        f"{cp.change * 100:+.1f}%",
        cp.direction,
        f"{cp.q_value:.2g}",
        f"{cp.nights_before}+{cp.nights_after}",
    ]


def change_table(history: History) -> TableOut:
    frame = pd.DataFrame([cells(cp) for cp in history.change_points], columns=list(HEADER))
    note = (
        f"before/after: medians of the nights on each side, up to the neighbouring change point; "
        f"q: two-sided exact rank test, Benjamini-Hochberg adjusted over every candidate (<= "
        f"{ALPHA}); nights: before+after."
    )
    return TableOut("Change points, newest first", frame, note, NUMERIC)


def cut_lines(history: History) -> list[str]:
    counts: dict[tuple[str, int, str], int] = {}
    for cut in history.cuts:
        key = (cut.metric, cut.version, cut.run.name)
        counts[key] = counts.get(key, 0) + 1
    return [
        f"{count} {metric} series cut at run {run}: definition changed in v{version}; no change "
        "point is looked for across it"
        for (metric, version, run), count in sorted(counts.items())
    ]


def summary_line(history: History) -> str:
    cases = history.points["case"].nunique()
    first, last = history.runs[0].label, history.runs[-1].label
    return (
        f"{len(history.runs)} runs ({first} .. {last}), {cases} cases, "
        f"{len(history.change_points)} change point(s)"
    )


def render_terminal(history: History, files: HistoryFiles) -> str:
    lines = [f"history: {summary_line(history)}"]
    if history.change_points:
        rows = [cells(cp) for cp in history.change_points]
        lines += ["", *tables.render_rows(HEADER, rows, NUMERIC)]
    lines += [f"note: {line}" for line in cut_lines(history)]
    lines.append(f"history: {files.html}, {files.markdown.name} and {files.csv.name}")
    return "\n".join(lines)


def csv_frame(history: History) -> pd.DataFrame:
    runs, points = history.runs, history.points
    marks = {(cp.case, cp.metric, cp.position): cp.direction for cp in history.change_points}
    marked = pd.Series([
        marks.get(key, "")
        for key in zip(points["case"], points["metric"], points["run"], strict=True)
    ], dtype="category") if marks else ""  # fmt: skip
    position = points["run"].to_numpy()

    def per_run(values: list[str]) -> pd.Series:
        """Each point's run's value, as categories (a million strings, written in a second)."""
        codes, uniques = pd.factorize(np.array(values, dtype=object))
        kinds = pd.CategoricalDtype(list(uniques))
        return pd.Series(pd.Categorical.from_codes(np.asarray(codes)[position], dtype=kinds))

    return pd.DataFrame(
        {
            "run": per_run([r.name for r in runs]),
            "run_dir": per_run([r.path for r in runs]),
            "started_utc": per_run([r.started_utc for r in runs]),
            "git_sha": per_run([r.git_sha for r in runs]),
            "schema_version": points["schema_version"],
            "kind": points["kind"],
            "case": points["case"],
            "metric": points["metric"],
            "value": points["value"],
            "low": points["low"],
            "high": points["high"],
            "segment": points["segment"],
            "change_point": marked,
        },
        columns=list(CSV_COLUMNS),
    )


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """DuckDB's CSV writer: a million points in about a second (pandas' takes ten)."""
    import duckdb

    connection = duckdb.connect()
    try:
        connection.register("points", frame)
        target = str(path).replace("'", "''")
        connection.execute(f"COPY points TO '{target}' (HEADER, DELIMITER ',')")
    finally:
        connection.close()


def render_page(history: History, table: TableOut, notes: list[str], figures: list[str]) -> str:
    """One self-contained page: the change points, then a trend panel per case (inline SVG)."""
    import html

    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        f"<title>distbench history</title><style>{CSS}</style></head><body>",
        "<h1>distbench history</h1>",
        f'<p class="lead">{html.escape(summary_line(history))}</p>',
        "<section><h2>Change points</h2>",
        html_table(table) if len(table.frame) else "<p>No change point.</p>",
        "</section>",
    ]
    if notes:
        items = "".join(f"<li>{html.escape(note)}</li>" for note in notes)
        parts.append(
            f'<section><h2>Definition changes</h2><ul class="notes">{items}</ul></section>'
        )
    parts += [
        "<section><h2>Trends</h2>",
        f"<p>{html.escape(TREND_TEXT)}</p>",
        *figures,
        "</section><footer>distbench history: runs ordered by their manifest's start time</footer>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


TREND_TEXT = (
    "Each case's median (us) and rate, night by night; the band is the night's fastest and "
    "slowest sample; the axis names the first and last runs and each change point's run (date "
    "and git revision). Red: a regression starts; green: an improvement; grey dashes: the "
    "column's definition changed."
)


def write_files(history: History, out: Path) -> HistoryFiles:
    from distbench.reports.history_figures import panels

    out.mkdir(parents=True, exist_ok=True)
    files = HistoryFiles(out / "history.html", out / "history.md", out / "history.csv", 0)
    write_csv(csv_frame(history), files.csv)
    table = change_table(history)
    notes = cut_lines(history)
    figures = panels(history)
    files.html.write_text(render_page(history, table, notes, figures), encoding="utf-8")
    markdown = ["# distbench history", "", summary_line(history), ""]
    markdown += [markdown_table(table) if len(table.frame) else "No change point.", ""]
    markdown += [f"- {line}" for line in notes]
    markdown += ["", f"Trend panels: {files.html.name}; every point: {files.csv.name}.", ""]
    files.markdown.write_text("\n".join(markdown), encoding="utf-8")
    return HistoryFiles(files.html, files.markdown, files.csv, len(figures))
