"""The report's side of schema evolution: a speedup is never drawn between two rows whose compared
column changed meaning between the schema versions of their runs (collectors/migrations.py). Such
pairs leave the comparison, and a note says which column, which versions and how many rows.

    kept, notes = drop_changed_meaning(ratios, "ddp", "step_time_us_p50")
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from distbench.collectors.migrations import changed_meaning, columns_at
from distbench.collectors.schema import SCHEMA_VERSION

VERSION = "schema_version"
"""The column load.concat_rows adds: the schema version of the run each row came from."""


def version_keys(frame: pd.DataFrame) -> list[str]:
    """[VERSION] when the rows carry their run's schema version: rows of two versions are then
    kept apart when matched, so drop_changed_meaning can judge each pair."""
    return [VERSION] if VERSION in frame.columns else []


def drop_changed_meaning(
    matched: pd.DataFrame, kind: str, column: str
) -> tuple[pd.DataFrame, list[str]]:
    """Rows of `matched` (a merge with `{VERSION}` and `{VERSION}_base` columns) whose `column`
    means the same in both versions, and one note per (version pair) that was dropped."""
    base_col = f"{VERSION}_base"
    if matched.empty or VERSION not in matched or base_col not in matched:
        return matched, []
    versions = list(zip(matched[base_col].astype(int), matched[VERSION].astype(int), strict=True))
    changed = [changed_meaning(kind, column, base, cur) for base, cur in versions]
    keep = pd.Series([c is None for c in changed], index=matched.index)
    notes = []
    dropped = Counter(pair for pair, gone in zip(versions, changed, strict=True) if gone)
    for (base, cur), count in sorted(dropped.items()):
        where = changed_meaning(kind, column, base, cur)
        notes.append(
            f"{count} {kind} row(s) not compared: {column}'s definition changed in v{where} "
            f"(the baseline's runs are schema v{base}, the others v{cur}); compare runs of one "
            "version, or re-measure the older one"
        )
    return matched[keep].reset_index(drop=True), notes


def older_meanings(frame: pd.DataFrame, kind: str) -> list[str]:
    """One note per source and schema version whose rows hold a column whose meaning changed
    since (collectors/migrations.py): the report shows such numbers as their run wrote them, and
    its words describe the current meaning (a v1 ddp run's samples/s is from its p50 step, the
    DDP section says the mean)."""
    if frame.empty or VERSION not in frame.columns:
        return []
    notes = []
    sources = frame["source"] if "source" in frame.columns else pd.Series("", index=frame.index)
    for (source, label), rows in frame.groupby([sources, frame[VERSION]], sort=True):
        version = int(str(label))
        changed = sorted(
            column
            for column in set(columns_at(kind, version))
            if changed_meaning(kind, column, version, SCHEMA_VERSION) and filled(rows, column)
        )
        if changed:
            where = f" of {source}" if source else ""
            notes.append(
                f"{len(rows)} {kind} row(s){where} come from schema v{version} runs: their "
                f"{', '.join(changed)} keep that version's definitions, not the ones this report "
                "describes (what changed: docs/upgrading.md; re-measure to compare them)"
            )
    return notes


def filled(rows: pd.DataFrame, column: str) -> bool:
    """Whether any row holds a value in `column` (not empty, not NaN)."""
    if column not in rows.columns:
        return False
    values = rows[column]
    return bool((values.notna() & (values.astype(str) != "")).any())
