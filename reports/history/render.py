"""history's outputs: the terminal (the states of the cases, the change points newest first),
history.csv with every point (points_csv.py), history.md and the self-contained history.html
(reports/render.py's page: the states, the change points, each case's verdict, one trend panel
per case from reports/history/figures.py)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from distbench import tables
from distbench.reports.history.build import ChangePoint, History
from distbench.reports.history.detect import ALPHA
from distbench.reports.history.points_csv import csv_frame, write_csv
from distbench.reports.history.verdict import Verdict
from distbench.reports.render import CSS, TableOut, format_number, html_table, markdown_table
from distbench.stats.changepoint import MIN_SIZE
from distbench.stats.verdict import NO_CHANGE, STATES, sees

HEADER = (
    "run", "date", "revision", "case", "metric", "before", "after", "change", "state", "p",
    "nights", "95 % from",
)  # fmt: skip
NUMERIC = ("before", "after", "change", "p", "nights")
SMALLEST_P = 1e-6
"""p-values below this print as '<1e-6': the simulated null's tail is a fitted model there."""
SHOWN = 20
"""Lines of verdicts in the terminal by state (regressed, improved, cannot tell); the files list
every case."""
SAME = 4
"""Cases of one state and one detail that the terminal prints as one line (verdict_lines)."""


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
        cp.state,
        ("<1e-6" if cp.p_value < SMALLEST_P else f"{cp.p_value:.2g}") + "*" * cp.together,
        f"{cp.nights_before}+{cp.nights_after}",
        cp.span_text,
    ]


def change_table(history: History) -> TableOut:
    frame = pd.DataFrame([cells(cp) for cp in history.change_points], columns=list(HEADER))
    return TableOut("Change points, newest first", frame, CHANGE_NOTE, NUMERIC)


CHANGE_NOTE = (
    "before/after: geometric means of the nights on each side, up to the neighbouring change "
    "point; p: the largest step statistic of the part searched against its simulated null "
    "(AR(1) drift plus launch noise, the choice of the night paid for), or, marked *, its step "
    "at the night its primitive's rows stepped together (their mean a series of the family); "
    "a series changed when "
    f"its Benjamini-Hochberg q over the history's series is <= {ALPHA}, and each further "
    "change point in it needs p <= that level x (series changed) / (series); nights: "
    "before+after; 95 % from: the runs before and after it (-3..+2) that its step's first night "
    "may be at: steps of its size simulated in its fitted noise are placed within them 95 % of "
    "the time (0: that run alone)."
)


def verdict_table(history: History) -> TableOut:
    """Every case's verdict over the last runs, by state, then case."""
    order = {state: i for i, state in enumerate(STATES)}
    rows = sorted(history.verdicts, key=lambda v: (order[v.state], v.case))
    frame = pd.DataFrame(
        [[v.case, v.metric, v.state, v.reason] for v in rows],
        columns=["case", "metric", "state", "detail"],
    )
    return TableOut(f"Verdicts over the last {recent_runs(history)}", frame, VERDICT_NOTE)


VERDICT_NOTE = (
    f"A step is seen once it has {MIN_SIZE} nights on its new level; 'would catch' is the "
    "smallest step its last part would show with 80 % power at the level it is tested at. "
    f"cannot tell: fewer than {2 * MIN_SIZE} nights since the last change (or the series' "
    "start), nights too few for its test to show any step below 10x, or not measured in the "
    "last run. 'before the last N runs': its last change point is older than the runs the "
    "verdict is about."
)


def state_counts(history: History) -> str:
    """'1 regressed, 0 improved, 100 no change seen (would catch >= 9-41 % after 3 nights,
    nothing in 60; >= 5-20 % after 7 nights; a primitive's rows at once >= 4-12 %), 7 cannot
    tell'. A case counted as no change seen would catch some step below 10x."""
    parts = []
    for state in STATES:
        chosen = [v for v in history.verdicts if v.state == state]
        text = f"{len(chosen)} {state}"
        if state == NO_CHANGE and chosen:
            text += f" ({catch_ranges(chosen, history.recent)})"
        parts.append(text)
    return ", ".join(parts)


def catch_ranges(chosen: list[Verdict], recent: int) -> str:
    """'would catch >= 9-41 % after 3 nights, nothing in 60; >= 5-20 % after 7 nights; a
    primitive's rows at once >= 4-12 %': what the cases that saw no change would have caught."""

    def span(values: list[float]) -> str:
        return f">= {min(values) * 100:.0f}-{max(values) * 100:.0f} %"

    seen = [v.detectable for v in chosen if sees(v.detectable)]
    blind = len(chosen) - len(seen)
    if seen:
        words = [f"{span(seen)} after {MIN_SIZE} nights" + (f", nothing in {blind}" * bool(blind))]
    else:
        words = [f"nothing after {MIN_SIZE} nights"]
    later = [v.later for v in chosen if sees(v.later)]
    if later:
        words.append(f"{span(later)} after {recent} nights")
    together = [v.together for v in chosen if sees(v.together)]
    if together:
        words.append(f"a primitive's rows at once {span(together)}")
    return "would catch " + "; ".join(words)


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


def recent_runs(history: History) -> str:
    """'7 runs', or '2 runs (of the 7 a verdict looks back over)' while fewer have run
    (--fail-on-regression N sets how many; else RECENT)."""
    shown = min(history.recent, len(history.runs))
    if shown < history.recent:
        return f"{shown} runs (of the {history.recent} a verdict looks back over)"
    return f"{shown} runs"


def summary_line(history: History) -> str:
    first, last = history.runs[0].label, history.runs[-1].label
    return (
        f"{len(history.runs)} runs ({first} .. {last}), {len(history.verdicts)} cases "
        f"(each its {STAT_WORDS[history.stat]}{LATENCY_ONLY.get(history.stat, '')}), "
        f"{len(history.change_points)} change point(s); over the last "
        f"{recent_runs(history)}: {state_counts(history)}"
    )


def render_terminal(history: History, files: HistoryFiles) -> str:
    lines = [f"history: {summary_line(history)}"]
    lines += [f"history: {line}" for line in (history.mode, history.drift) if line]
    older = {v.case for v in history.verdicts if v.older}  # a change the table lists
    listed = verdict_lines(
        [
            v
            for v in verdict_table(history).frame.itertuples()
            if v.state != NO_CHANGE or v.case in older
        ],
        files.markdown.name,
    )
    lines += [line for line, _count in listed[:SHOWN]]
    if len(listed) > SHOWN:
        rest = sum(count for _line, count in listed[SHOWN:])
        lines.append(f"  ... and {rest} more in {files.markdown.name}")
    if history.change_points:
        rows = [cells(cp) for cp in history.change_points]
        lines += ["", *tables.render_rows(HEADER, rows, NUMERIC)]
    lines += [f"note: {line}" for line in cut_lines(history)]
    lines.append(f"history: {files.html}, {files.markdown.name} and {files.csv.name}")
    return "\n".join(lines)


def verdict_lines(rows: list, markdown: str) -> list[tuple[str, int]]:
    """The terminal's verdicts (rows of verdict_table, but no change seen unless its last change
    point is older than the verdicts' runs: the change table lists it), each with the cases
    it stands for: a case a line, except that SAME or more cases of one state and one detail
    are one line ('cannot tell: 109 cases (too few nights: 2 of 6), listed in history.md')."""
    by_reason: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        by_reason.setdefault((row.state, row.detail), []).append(row.case)
    out = []
    for (state, detail), cases in by_reason.items():
        if len(cases) >= SAME:
            out.append((f"  {state}: {len(cases)} cases ({detail}), listed in {markdown}",
                        len(cases)))  # fmt: skip
        else:
            out += [(f"  {state}: {case} ({detail})", 1) for case in cases]
    return out


def render_page(
    history: History, tables_out: list[TableOut], notes: list[str], figures: list[str]
) -> str:
    """One self-contained page: the verdicts, the change points, then a trend panel per case
    (inline SVG)."""
    import html

    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        f"<title>distbench history</title><style>{CSS}</style></head><body>",
        "<h1>distbench history</h1>",
        f'<p class="lead">{html.escape(summary_line(history))}</p>',
        *(f"<p>{html.escape(line)}</p>" for line in (history.mode, history.drift) if line),
    ]
    for table, empty in zip(tables_out, ("No change point.", "No case."), strict=True):
        parts += [
            f"<section><h2>{html.escape(table.title)}</h2>",  # the heading; no caption too
            html_table(replace(table, title="")).replace("<caption></caption>", "", 1)
            if len(table.frame)
            else f"<p>{empty}</p>",
            "</section>",
        ]
    if notes:
        items = "".join(f"<li>{html.escape(note)}</li>" for note in notes)
        parts.append(
            f'<section><h2>Definition changes</h2><ul class="notes">{items}</ul></section>'
        )
    parts += [
        "<section><h2>Trends</h2>",
        f"<p>{html.escape(trend_text(history.stat, bool(history.wholes)))}</p>",
        *figures,
        "</section><footer>distbench history: runs ordered by their manifest's start time</footer>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


STAT_WORDS = {
    "min": "fastest trial",
    "p50": "median (p50)",
    "mean": "mean time",
    "max": "slowest trial",
    "p95": "95th percentile",
    "p99": "99th percentile",
}
"""What each statistic of --metric is called in the page's prose (load.STATS)."""


LATENCY_ONLY = dict.fromkeys(("p95", "p99"), ": latency rows only, throughput rows record none")
"""What the summary line adds to a statistic only latency rows record."""


def trend_text(stat: str, whole_run: bool = True) -> str:
    """The Trends section's prose for the judged statistic; its last sentence only where a whole
    run's panel is drawn (relative mode)."""
    text = TREND_TEXT.replace("fastest trial", STAT_WORDS[stat], 1)
    return text if whole_run else text.split(" In relative mode", 1)[0]


TREND_TEXT = (
    "Each case's fastest trial (us), night by night: the geometric mean of the night's launches, "
    "the band from its lowest to its highest launch; the axis names the first and last runs and "
    "each change point's run (date and git revision). Red: it regressed from that night; green: "
    "it improved; grey dashes: the column's definition changed. In relative mode a case's "
    "change point is a step beyond the rest of its run (the panel shows its own values), and the "
    "first panel is the whole run: the common level of every primitive, night by night."
)


def write_files(history: History, out: Path) -> HistoryFiles:
    from distbench.reports.history.figures import panels

    out.mkdir(parents=True, exist_ok=True)
    files = HistoryFiles(out / "history.html", out / "history.md", out / "history.csv", 0)
    write_csv(csv_frame(history), files.csv)
    tables_out = [change_table(history), verdict_table(history)]
    notes = cut_lines(history)
    figures = panels(history)
    files.html.write_text(render_page(history, tables_out, notes, figures), encoding="utf-8")
    markdown = ["# distbench history", "", summary_line(history), ""]
    markdown += [x for line in (history.mode, history.drift) if line for x in (line, "")]
    for table, empty in zip(tables_out, ("No change point.", "No case."), strict=True):
        markdown += [markdown_table(table) if len(table.frame) else empty, ""]
    markdown += [f"- {line}" for line in notes]
    markdown += ["", f"Trend panels: {files.html.name}; every point: {files.csv.name}.", ""]
    files.markdown.write_text("\n".join(markdown), encoding="utf-8")
    return HistoryFiles(files.html, files.markdown, files.csv, len(figures))
