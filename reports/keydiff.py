"""Why two runs share no case: the one column of the match key whose values alone keep their rows
apart (issue #26 item 8: a run measured with --env and one without matched nothing, and compare
and the report said so without naming `env`).

    explain_no_common_rows(base_rows, current_rows)
    # "they differ only in env: empty (no --env) in the baseline, 'NCCL_ALGO=Ring' in the
    #  current run, and agree on every other column of 8 rows; --env makes ..."

compare's "no row in common" error and the report's headline end with this clause. Rows are
mappings (or a DataFrame) holding every column of `columns` (COMM_MATCH_KEY by default); values
are compared as text, as the match key compares them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from distbench.collectors.schema import COMM_MATCH_KEY

HINTS = {
    "env": "--env makes each combination of its variables a case of its own: compare runs "
    "measured with the same --env (or give the baseline the same --env)",
    "api": "--api makes each API a case of its own: compare runs of the same --api",
    "buffers": "--buffers makes each kind of buffer a case of its own",
    "graph": "--cuda-graph makes graph replays a case of their own",
    "placement": "--placement makes in-place and out-of-place cases of their own",
    "world_size": "compare runs of the same --world-sizes",
    "backend": "compare runs of the same --backend",
    "dtype": "compare runs of the same --dtype",
}
"""What to do about a column that alone keeps two runs apart."""

Keys = set[tuple[str, ...]]


@dataclass(frozen=True)
class KeyDifference:
    """One column whose values alone keep two runs' rows apart."""

    column: str
    base_values: tuple[str, ...]
    current_values: tuple[str, ...]
    rows: int
    """Rows of the current run that would match a baseline row without this column."""


def key_tuples(rows: pd.DataFrame | Iterable[Mapping[str, Any]], columns: Sequence[str]) -> Keys:
    """Each row's key as a tuple of text, in `columns` order."""
    if isinstance(rows, pd.DataFrame):  # by column: a dict per row cost 1 s at 10,000 rows
        return set(zip(*(column_text(rows, c) for c in columns), strict=True))
    return {tuple(text_of(record.get(c, "")) for c in columns) for record in rows}


def column_text(rows: pd.DataFrame, column: str) -> list[str]:
    """A column's cells as text_of gives them."""
    if column not in rows:
        return [""] * len(rows)
    values = rows[column]
    missing = values.isna().tolist()
    return ["" if gone else str(v) for v, gone in zip(values.tolist(), missing, strict=True)]


def text_of(value: Any) -> str:
    """A cell as the key compares it: NaN, None and pandas' NA are empty."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return ""
    return str(value)


def without(keys: Keys, index: int) -> dict[tuple[str, ...], set[str]]:
    """Each key less its column `index`, with the values that column held."""
    found: dict[tuple[str, ...], set[str]] = {}
    for key in keys:
        found.setdefault(key[:index] + key[index + 1 :], set()).add(key[index])
    return found


def key_differences(
    base_rows: pd.DataFrame | Iterable[Mapping[str, Any]],
    current_rows: pd.DataFrame | Iterable[Mapping[str, Any]],
    columns: Sequence[str] = COMM_MATCH_KEY,
) -> list[KeyDifference]:
    """The columns of the key that alone keep rows apart: without each one, these rows of the
    two runs would match. Empty when the runs share a row, or when no single column explains."""
    base, current = key_tuples(base_rows, columns), key_tuples(current_rows, columns)
    if base & current:
        return []
    found = []
    for index, column in enumerate(columns):
        base_rest, current_rest = without(base, index), without(current, index)
        common = base_rest.keys() & current_rest.keys()
        if common:
            found.append(
                KeyDifference(
                    column,
                    tuple(sorted(set().union(*(base_rest[k] for k in common)))),
                    tuple(sorted(set().union(*(current_rest[k] for k in common)))),
                    len(common),
                )
            )
    return found


def values_text(column: str, values: tuple[str, ...]) -> str:
    shown = [
        ("empty (no --env)" if column == "env" else "empty") if value == "" else f"'{value}'"
        for value in values
    ]
    return " and ".join(shown)


def explain_no_common_rows(
    base_rows: pd.DataFrame | Iterable[Mapping[str, Any]],
    current_rows: pd.DataFrame | Iterable[Mapping[str, Any]],
    columns: Sequence[str] = COMM_MATCH_KEY,
    names: tuple[str, str] = ("the baseline", "the current run"),
) -> str:
    """Why the two runs share no row, as a clause for 'X and Y have no row in common: ...':
    the column that alone keeps them apart, its values on each side and what to do; else the
    columns with no value in common; '' when they do share a row."""
    base, current = key_tuples(base_rows, columns), key_tuples(current_rows, columns)
    if not base or not current or base & current:
        return ""
    differences = key_differences(base_rows, current_rows, columns)
    if differences:
        first = differences[0]
        text = (
            f"they differ only in {first.column}: "
            f"{values_text(first.column, first.base_values)} in {names[0]}, "
            f"{values_text(first.column, first.current_values)} in {names[1]}, and agree on "
            f"every other column of {first.rows} row{'s' * (first.rows != 1)}"
        )
        hint = HINTS.get(first.column)
        return text + (f"; {hint}" if hint else "")
    disjoint = [
        column
        for index, column in enumerate(columns)
        if not {k[index] for k in base} & {k[index] for k in current}
    ]
    if disjoint:
        return f"they have no value of {', '.join(disjoint)} in common: they measured other cases"
    return "no row agrees on every column of the case at once (each column has values in common)"
