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


def older_meanings(frames: dict[str, pd.DataFrame]) -> list[str]:
    """One note, or none, for the rows (frames: kind -> rows, each with its `source`) of schema
    versions whose columns' meanings changed since (collectors/migrations.py): the report shows
    such numbers as their run wrote them while its words describe the current meaning (a v1 ddp
    run's samples/s is from its p50 step, the DDP section says the mean). Per version: its rows
    per source and kind, the columns that changed, and the sections of upgrading.md that say how.
    One short note: a paragraph per source and kind made four of the README's example."""
    versions = sorted(set().union(*(versions_of(frame) for frame in frames.values())))
    parts = [part for version in versions if (part := version_part(frames, version))]
    if not parts:
        return []
    return [f"Older schema versions: {'; '.join(parts)}; re-measure to compare them"]


def version_part(frames: dict[str, pd.DataFrame], version: int) -> str | None:
    """'182 rows from schema v1 runs (cluster-a: 70 comm, 21 ddp; cluster-b: ...) keep that
    version's definitions of comm ... and ddp ... (what changed: docs/upgrading.md#v2 and #v4)'."""
    counts: dict[str, list[str]] = {}  # source -> ['70 comm', '21 ddp']
    columns: list[str] = []
    anchors: set[str] = set()
    total = 0
    for kind, frame in frames.items():
        if version not in versions_of(frame):
            continue
        rows = frame[pd.to_numeric(frame[VERSION], errors="coerce") == version]
        changed = changed_columns(rows, kind, version)
        if not changed:
            continue
        total += len(rows)
        columns.append(f"{kind} {', '.join(shorten(changed))}")
        anchors.update(f"#v{step}" for steps in changed.values() for step in steps)
        sources = rows["source"].astype(str) if "source" in rows else pd.Series("", rows.index)
        for source, n in sources.value_counts().sort_index().items():
            counts.setdefault(str(source), []).append(f"{n} {kind}")
    if not columns:
        return None
    where = [f"{s}: {', '.join(n)}" if s else ", ".join(n) for s, n in counts.items()]
    where = where if len(where) <= MOST_SOURCES else [f"{len(where)} sources"]
    return (
        f"{total} rows from schema v{version} runs ({'; '.join(where)}) keep that version's "
        f"definitions of {' and '.join(columns)} (what changed: "
        f"docs/upgrading.md{' and '.join(sorted(anchors))})"
    )


MOST_SOURCES = 3
"""Sources the note names one by one; past it, it counts them."""


def versions_of(frame: pd.DataFrame) -> set[int]:
    """The schema versions older than this distbench's among the frame's rows."""
    if frame.empty or VERSION not in frame.columns:
        return set()
    found = pd.to_numeric(frame[VERSION], errors="coerce").dropna().unique()
    return {int(v) for v in found} - {SCHEMA_VERSION}


def changed_columns(rows: pd.DataFrame, kind: str, version: int) -> dict[str, list[int]]:
    """The columns of `kind` that `rows` (of `version`) fill and whose meaning changed since,
    each with the versions that changed it (migrations.changed_meaning, one step at a time)."""
    changed = {}
    for column in sorted(set(columns_at(kind, version))):
        steps = range(version + 1, SCHEMA_VERSION + 1)
        when = [step for step in steps if changed_meaning(kind, column, step - 1, step)]
        if when and filled(rows, column):
            changed[column] = when
    return changed


def shorten(columns: dict[str, list[int]]) -> list[str]:
    """Column names, those of three or more that share a prefix as one (`step_time_us_*`)."""
    prefix = {column: column.rsplit("_", 1)[0] + "_" for column in columns}
    shared = Counter(prefix.values())
    shown = [f"{prefix[c]}*" if shared[prefix[c]] >= 3 else c for c in columns]
    return list(dict.fromkeys(shown))


def filled(rows: pd.DataFrame, column: str) -> bool:
    """Whether any row holds a value in `column` (not empty, not NaN)."""
    if column not in rows.columns:
        return False
    values = rows[column]
    return bool((values.notna() & (values.astype(str) != "")).any())
