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
  refused later, with its line, by reports/load.py).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import fields

import numpy as np
import pandas as pd

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
        if kind == "int" or (kind == "str" and name in keys):
            frame[name] = canonical_integers(frame[name])
        if kind == "str":
            frame[name] = canonical_booleans(frame[name])
    return frame
