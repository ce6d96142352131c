"""Write a report's sections as one self-contained HTML page and as GitHub-flavoured Markdown.

The page embeds every figure as a base64 PNG data URI and carries its CSS inline: no scripts,
fonts, stylesheets or links to fetch, so it opens from disk, from an e-mail or from a CI artifact.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd

from distbench import tables
from distbench.parse import format_asked_size

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
       max-width: 1400px; padding: 0 1.5rem; color: #1f2328; background: #ffffff;
       line-height: 1.45; }
div.scroll { overflow-x: auto; }
h1 { border-bottom: 2px solid #d0d7de; padding-bottom: .3rem; }
h2 { border-bottom: 1px solid #d0d7de; padding-bottom: .2rem; margin-top: 2.2rem; }
p.lead, p.note { color: #57606a; }
table { border-collapse: collapse; margin: .8rem 0 1.4rem; font-size: .86rem; }
th, td { border: 1px solid #d0d7de; padding: .25rem .45rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td { white-space: nowrap; }
/* a manifest of 10 runs side by side fits a 1,400 px window (long words break) */
table.wrap td { white-space: normal; min-width: 6rem; overflow-wrap: anywhere; }
td.text { white-space: normal; min-width: 10rem; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.differs th { background: #fff8c5; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: .3rem 0; }
figure { margin: 1rem 0 2rem; }
figure img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
figcaption { color: #57606a; font-size: .9rem; margin-top: .3rem; }
ul.notes li { color: #9a6700; }
details summary { cursor: pointer; color: #0969da; }
footer { color: #57606a; font-size: .8rem; margin-top: 3rem; }
"""


class Png(Protocol):
    """A figure's PNG, perhaps still being drawn (report/figures/drawing.py)."""

    def png(self) -> bytes: ...


@dataclass(frozen=True)
class FigureOut:
    """A figure written as PNG: its file, what it shows, and its bytes for the page."""

    name: str
    caption: str
    drawn: Png

    @property
    def png(self) -> bytes:
        """The PNG's bytes (waiting for them if the figure is still being drawn)."""
        return self.drawn.png()


@dataclass(frozen=True)
class TableOut:
    """A table of display strings (already formatted) with its column headings."""

    title: str
    frame: pd.DataFrame
    note: str = ""
    numeric: tuple[str, ...] = ()
    """Columns to right-align."""
    markdown: bool = True
    """False: HTML only (long tables)."""
    collapsed: bool = False
    """HTML: inside a <details> element."""
    highlight: tuple[int, ...] = ()
    """Row positions to mark (e.g. manifest fields that differ between runs)."""
    wrap: bool = False
    """HTML: let long cells wrap (manifests: commands); other tables keep a row on one line."""
    wrapped: tuple[str, ...] = ()
    """HTML: columns whose cells wrap in a table whose rows keep to one line otherwise (verdicts:
    'cannot tell: learning the noise: 1 of 5 nights' held a speedup table wider than the page)."""


@dataclass
class Section:
    title: str
    text: str = ""
    figures: list[FigureOut] = field(default_factory=list)
    tables: list[TableOut] = field(default_factory=list)


def format_number(value: object, digits: int = 4) -> str:
    """A report cell: `digits` significant digits as every distbench table prints them
    (distbench.tables.format_number), an empty cell (NaN) '—', an infinity '∞'; text as it is."""
    if value is None or isinstance(value, str):
        return value or ""
    number = float(value)  # type: ignore[arg-type]
    return tables.format_number(number, digits, empty="—", infinite="∞")


def size_cells(rows: pd.DataFrame) -> list[str]:
    """Each row's size as a report's cell: as asked for, `1K` (parse.format_asked_size), never
    the 1,020 bytes an all_gather at 3 ranks measured of it; CSV and JSON keep the bytes."""
    asked = rows["requested_bytes"] if "requested_bytes" in rows else [None] * len(rows)
    return list(map(format_asked_size, rows["size_bytes"], asked))


def frame_columns(frame: pd.DataFrame) -> list[list[Any]]:
    """The frame's columns as lists, by position (names may repeat)."""
    return [frame.iloc[:, i].tolist() for i in range(frame.shape[1])]


def columns_to_rows(columns: list[list[Any]], length: int) -> Iterable[tuple[Any, ...]]:
    """Column lists back to row tuples; `length` empty tuples when there is no column."""
    return zip(*columns, strict=True) if columns else [()] * length


def frame_rows(frame: pd.DataFrame) -> Iterable[tuple[Any, ...]]:
    """The frame's rows as tuples, as itertuples(index=False) gives them, from column lists
    (itertuples took ~1 s on a 10,000-row report's tables)."""
    return columns_to_rows(frame_columns(frame), len(frame))


def html_table(table: TableOut) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.frame.columns)
    escaped: dict[str, str] = {}  # a text's escape, once per table: most cells repeat a value

    def cell(value: Any, start: str) -> str:
        text = str(value)
        found = escaped.get(text)
        if found is None:
            found = escaped[text] = html.escape(text)
        return f"{start}{found}</td>"

    frame = table.frame

    def start(column: str) -> str:
        if column in table.numeric:
            return '<td class="num">'
        return '<td class="text">' if column in table.wrapped else "<td>"

    columns = [  # each column's cells at once (a 5,000-row table: 0.3 s in per-cell loops)
        [cell(value, start(column)) for value in cells]
        for column, cells in zip(frame.columns, frame_columns(frame), strict=True)
    ]
    rows = columns_to_rows(columns, len(frame))
    differs = ' class="differs"'
    body = [
        f"<tr{differs if position in table.highlight else ''}>{''.join(cells)}</tr>"
        for position, cells in enumerate(rows)
    ]
    note = f'<p class="note">{html.escape(table.note)}</p>' if table.note else ""
    grid = (
        f'<div class="scroll"><table class="{"wrap" if table.wrap else "grid"}">'
        f"<caption>{html.escape(table.title)}</caption>"
        f"<thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )
    if table.collapsed:
        grid = f"<details><summary>{html.escape(table.title)}</summary>{grid}</details>"
    return note + grid


def render_html(
    title: str, lead: str, sections: list[Section], notes: list[str], footer: str
) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="lead">{html.escape(lead)}</p>',
    ]
    for section in sections:
        parts.append(f"<section><h2>{html.escape(section.title)}</h2>")
        if section.text:
            parts.append(f"<p>{html.escape(section.text)}</p>")
        for figure in section.figures:
            data = base64.b64encode(figure.png).decode("ascii")
            parts.append(
                f'<figure><img src="data:image/png;base64,{data}" '
                f'alt="{html.escape(figure.caption)}">'
                f"<figcaption>{html.escape(figure.caption)} ({html.escape(figure.name)})"
                "</figcaption></figure>"
            )
        parts.extend(html_table(table) for table in section.tables)
        parts.append("</section>")
    if notes:
        items = "".join(f"<li>{html.escape(note)}</li>" for note in notes)
        parts.append(f'<section><h2>What could not be shown</h2><ul class="notes">{items}</ul>')
        parts.append("</section>")
    parts.append(f"<footer>{html.escape(footer)}</footer></body></html>")
    return "\n".join(parts) + "\n"


def markdown_alt(text: str) -> str:
    """Image alt text: one line, no brackets to end it early."""
    return " ".join(text.replace("[", "(").replace("]", ")").split())


def markdown_cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(table: TableOut) -> str:
    columns = list(table.frame.columns)
    align = ["---:" if c in table.numeric else "---" for c in columns]
    lines = [
        f"**{table.title}**",
        "",
        "| " + " | ".join(markdown_cell(c) for c in columns) + " |",
        "| " + " | ".join(align) + " |",
    ]
    for position, row in enumerate(frame_rows(table.frame)):
        cells = [markdown_cell(v) for v in row]
        if position in table.highlight and cells:
            cells[0] = f"**{cells[0]}**"
        lines.append("| " + " | ".join(cells) + " |")
    if table.note:
        lines += ["", table.note]
    return "\n".join(lines)


def render_markdown(
    title: str, lead: str, sections: list[Section], notes: list[str], footer: str
) -> str:
    parts = [f"# {title}", "", lead, ""]
    for section in sections:
        tables = [t for t in section.tables if t.markdown]
        if not tables and not section.figures and (section.tables or not section.text):
            continue  # only HTML tables (or nothing): a section of text alone is kept
        parts += [f"## {section.title}", ""]
        if section.text:
            parts += [section.text, ""]
        for figure in section.figures:  # the PNGs lie next to report.md: GitHub shows them
            parts += [f"![{markdown_alt(figure.caption)}]({figure.name})", "", figure.caption, ""]
        for table in tables:
            parts += [markdown_table(table), ""]
    if notes:
        parts += ["## What could not be shown", ""] + [f"- {note}" for note in notes] + [""]
    parts += [f"_{footer}_", ""]
    return "\n".join(parts)
