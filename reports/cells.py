"""Cells read by type (#26 item 10): a results.csv that a user read and wrote back with pandas, or
edited in a spreadsheet, still matches itself in compare and report.

pandas reads distbench's `false` as a boolean and writes `False`; it reads a column of integers
with empty cells (`root` of all_reduce beside broadcast's `0`) as floats and writes `0.0`; a
spreadsheet writes `FALSE`. Rows are matched on their cells as text (reports/kinds.py MATCH_KEYS),
so each of these used to make a row a new case: compare found "no row in common" and the report's
speedup section vanished. Every reader of results.csv therefore puts each cell in the one
spelling distbench writes, by the column's type:

- booleans (`true`/`false` columns), however capitalised: `true`, `false`;
- integers (int columns, and the key columns of text type that hold numbers: root, src, dst,
  bucket_mb, avg_every ...): an integral number however written (`0.0`, `1e3`, `+4`) as the
  integer (`0`, `1000`, `4`);
- empty cells stay empty; anything else is left as written (a non-number in a number column is
  refused, with its line, by `numbers_of` below).

It also holds the CSV reading below the cells: results.csv and samples.csv as strings, a damaged
file (too few fields on a line) and a non-number in a number column refused with the line.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import fields
from pathlib import Path

import numpy as np
import pandas as pd

from distbench.parse import UsageError
from distbench.reports.kinds import INTEGER_TYPES

BOOLEANS = ("true", "false")


def canonical_booleans(column: pd.Series) -> pd.Series:
    """`True`, `FALSE` ... as `true`, `false`; every other cell as it is. Decided once per
    distinct cell: a column holds few, and a reader puts every text column of every file
    through this."""
    spelled = {cell: cell.strip().lower() for cell in pd.unique(column) if isinstance(cell, str)}
    change = {cell: low for cell, low in spelled.items() if low in BOOLEANS and low != cell}
    return column.replace(change) if change else column


def canonical_integers(column: pd.Series) -> pd.Series:
    """Integral numbers (`0.0`, `1e3`, `+4`) as integers (`0`, `1000`, `4`); other cells as they
    are (fractions, text, empty)."""
    cells = pd.unique(column)  # decided once per distinct cell, as canonical_booleans
    values = pd.to_numeric(pd.Series(cells, dtype=object), errors="coerce").to_numpy(
        dtype=float, na_value=np.nan
    )
    integral = np.isfinite(values) & (np.abs(values) < 2**63)
    integral[integral] = values[integral] == np.floor(values[integral])
    change = {
        cell: str(int(value))
        for cell, value, whole in zip(cells, values, integral, strict=True)
        if whole and cell != str(int(value))
    }
    return column.replace(change) if change else column


def canonical_cells(frame: pd.DataFrame, row_type: type, keys: Collection[str]) -> pd.DataFrame:
    """`frame` (cells as strings) with each cell in distbench's own spelling, by its column's
    type in `row_type` (module docstring); `keys`: the columns rows are matched on."""
    types = {f.name: str(f.type) for f in fields(row_type)}
    for name in frame.columns:
        kind = types.get(name)
        if kind in INTEGER_TYPES or (kind == "str" and name in keys):
            frame[name] = canonical_integers(frame[name])
        if kind == "str":
            frame[name] = canonical_booleans(frame[name])
    return frame


def read_csv_strings(path: Path, required: list[str] | tuple[str, ...], what: str) -> pd.DataFrame:
    """A CsvSink file as strings, refusing empty, truncated and foreign files with one line."""
    try:
        text_size = path.stat().st_size
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror}") from None
    if text_size == 0:
        raise UsageError(f"{path} is empty (not even a header): it is not a distbench {what}")
    with open(path, "rb") as handle:
        handle.seek(-1, 2)
        if handle.read(1) != b"\n":
            raise UsageError(
                f"{path} is truncated: its last line is incomplete (distbench writes whole lines)"
            )
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[])
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UsageError(f"{path} is not a readable CSV: {first}") from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        shown = ", ".join(missing[:5]) + more
        raise UsageError(f"{path} is not a distbench {what}: it lacks the columns {shown}")
    check_field_counts(path)
    return frame


def check_field_counts(path: Path) -> None:
    """Refuse a line with fewer fields than the header (pandas would pad it with empty cells).

    Counting commas is enough: distbench's cells never hold one, and a quoted comma could only
    make a line look longer, never shorter.
    """
    lines = pd.Series(path.read_text(encoding="utf-8", errors="replace").split("\n"))
    counts = lines.str.count(",").to_numpy()
    short = (counts[1:-1] < counts[0]).nonzero()[0]  # [-1]: the empty string after the last \n
    if len(short):
        line = int(short[0]) + 2  # the header is line 1
        raise UsageError(f"{path} is truncated or damaged: line {line} has too few fields")


def numbers_of(frame: pd.DataFrame, column: str, path: Path) -> pd.Series:
    """A column of strings as numbers; an empty cell is NaN, any other non-number is an error."""
    values = pd.to_numeric(frame[column], errors="coerce")
    missing = values.isna().to_numpy()
    if not missing.any():
        return values
    bad = missing.copy()
    bad[missing] = (frame[column][missing].str.strip() != "").to_numpy()  # only the non-numbers
    if bad.any():
        index = int(bad.nonzero()[0][0])
        raise UsageError(
            f"{path} line {index + 2}: column {column} holds "
            f"'{frame[column].iloc[index]}', not a number"
        )
    return values


def check_numeric(frame: pd.DataFrame, columns: list[str], path: Path) -> None:
    """Refuse a non-number in `columns`, leaving the cells as they are (compare keeps strings)."""
    for column in (c for c in columns if c in frame.columns):
        numbers_of(frame, column, path)


def convert_numeric(frame: pd.DataFrame, columns: list[str], path: Path) -> pd.DataFrame:
    """Numbers from strings, in place; an empty cell is NaN, any other non-number is an error."""
    for column in (c for c in columns if c in frame.columns):
        frame[column] = numbers_of(frame, column, path)
    return frame
