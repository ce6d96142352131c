"""The one number formatter, and the one way a table reaches the terminal, for every table distbench
prints: the ones the CLI prints as a run goes (comm/table.py in nccl-tests' layout, ddp/table.py)
and the reports' (compare, the baseline list, the cells of the HTML/Markdown report). It imports
rich and distbench.parse only: the CLI process, which never imports torch, loads it, and so does a
report.

    format_number("0.0002048", BANDWIDTH_DIGITS)  # '0.0002048': significant digits
    format_number("5000.0", ".2f")                # '5000.00': a format spec (fixed decimals)
    format_number("", ".2f")                      # '-': an empty cell, the column does not apply

No number carries a thousands separator; significant digits never turn into an exponent.

A table is a rich Table printed as plain text (`render_rows`): no colour or other escape codes,
ASCII only, and exactly as wide as its contents, so a terminal, a pipe, a CI log and a --save file
get the same lines, and no cell is cut or wrapped.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence

from rich.box import Box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from distbench.parse import format_significant

BANDWIDTH_DIGITS = 4
"""Significant digits of a GB/s figure: 0.00512 GB/s, not 0.000."""

PLAIN = Box("    \n    \n -- \n    \n    \n -- \n    \n    \n", ascii=True)
"""A header, a rule of dashes under it, then the rows: rich's SIMPLE box in ASCII."""

WIDEST = 100_000
"""The console width a table is laid out in: wider than any table, so none is ever squeezed."""


def format_number(
    value: float | str | None, spec: int | str, empty: str = "-", infinite: str = "inf"
) -> str:
    """A number as a table prints it. `spec`: an int is that many significant digits (plain
    decimals, parse.format_significant), a string a format spec such as `.2f`. A CSV cell is read
    as a number; None, an empty cell and NaN give `empty`, an infinity `infinite` (signed), and a
    cell that is not a number comes back as it is."""
    if value is None:
        return empty
    if isinstance(value, str):
        if not value.strip():
            return empty
        try:
            number = float(value)
        except ValueError:
            return value
    else:
        number = float(value)
    if math.isnan(number):
        return empty
    if math.isinf(number):
        return infinite if number > 0 else f"-{infinite}"
    if isinstance(spec, int):
        return format_significant(number, spec)
    return format(number, spec)


def natural_key(text: str) -> tuple[tuple[int, float, str], ...]:
    """A sort key that reads the numbers in a label as numbers: bucket_mb=5 before =25, trials 5
    before 12."""
    return tuple(
        (0, float(part), "") if part[:1].isdigit() else (1, 0.0, part)
        for part in re.split(r"(\d+(?:\.\d+)?)", text)
        if part
    )


def group_rows(
    rows: Iterable[dict[str, str]], columns: Sequence[str]
) -> dict[tuple[str, ...], list[dict[str, str]]]:
    """The rows of one table each, in the order given: keyed by the values of `columns`, then by
    the --env combination (env; empty without --env), one table per combination, which its
    header names (else two tables would read as identical)."""
    groups: dict[tuple[str, ...], list[dict[str, str]]] = {}
    for row in rows:
        groups.setdefault((*(row[c] for c in columns), row.get("env", "")), []).append(row)
    return groups


def render_rows(
    header: Sequence[str], rows: Iterable[Sequence[str]], numeric: Collection[str] = ()
) -> list[str]:
    """The lines of a plain-text table: the header, a rule, a line per row, two spaces between
    columns; columns named in `numeric` are right-aligned, the others left-aligned. Cells are
    text as given (never read as rich markup)."""
    table = Table(box=PLAIN, show_edge=False, pad_edge=False, collapse_padding=True)
    for name in header:
        table.add_column(Text(name), justify="right" if name in numeric else "left", no_wrap=True)
    for cells in rows:
        table.add_row(*(Text(cell) for cell in cells))
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=WIDEST,
        color_system=None,
        force_terminal=False,
        no_color=True,
        markup=False,
        highlight=False,
        emoji=False,
    )
    console.print(table)
    return [line.rstrip() for line in buffer.getvalue().splitlines()]


def title_line(what: str, rows: Sequence[Mapping[str, str]], time: str) -> str:
    """The `#` line above a table, as the collectives' tables begin: what was measured, on what
    backend, device, world size(s) and timer, and what its time cells are."""
    first = rows[0] if rows else {}
    sizes = ",".join(dict.fromkeys(row.get("world_size", "") for row in rows))
    return (
        f"# {what}  backend={first.get('backend', '')}  device={first.get('device', '')}  "
        f"world_size={sizes}  timer={first.get('timer', '')}  time={time}"
    )
