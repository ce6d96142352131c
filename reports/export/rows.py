"""What every export reads: a run's communication rows (one per case, the run that started last
winning a repeat, as compare reads them: reports/runs.py load_run), its manifest, and the names
and numbers the formats share.

    run = load_export_run(Path("results/RUN"))
    for row in run.rows: case_name(row), number(row, "time_us_p50")
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from distbench.collectors.migrations import changed_meaning
from distbench.collectors.schema import SCHEMA_VERSION
from distbench.parse import UsageError
from distbench.reports.compare.words import row_name
from distbench.reports.kinds import CASE_DEFAULTS
from distbench.reports.runs import Row, find_run_dirs, load_run

DEFAULTS = {c: CASE_DEFAULTS[c] for c in ("nnodes", "graph", "buffers")}
"""Case columns that compare's row name leaves out; a name adds them when they differ from these."""


@dataclass
class ExportRun:
    """One run directory (or a folder of them, a sweep) as the exports read it."""

    path: Path
    rows: list[Row]
    """Communication rows, one per case (COMM_MATCH_KEY), in the order the run wrote them."""
    manifest: dict[str, Any]
    """The run's manifest as read_manifest gives it (nodes and ranks whole); {} without one."""
    notes: list[str] = field(default_factory=list)
    """What the export leaves out, and why (printed on stderr)."""
    started: datetime | None = None
    """When its first run started (manifests' started_utc); None without a manifest."""
    ended: datetime | None = None
    """When its last run ended (manifests' ended_utc, else started_utc); None without one."""


def load_export_run(path: Path) -> ExportRun:
    """The run at `path`; UsageError when it cannot be read or holds no communication row."""
    run = load_run(Path(path))
    comm = [row for row in run.rows.values() if row.kind == "comm"]
    notes = []
    others = sum(count for kind, count in run.read.items() if kind != "comm")  # repeats too
    kinds = sorted({row.kind for row in run.rows.values() if row.kind != "comm"})
    if others:
        notes.append(
            f"{others} {'/'.join(kinds)} row(s) left out: the exports hold communication rows"
        )
    if not comm:
        raise UsageError(
            f"{path} holds no communication row to export (only {'/'.join(kinds) or 'no'} rows): "
            "give the run of a primitive or sweep"
        )
    if run.repeats.get("comm"):  # the exports hold communication rows only
        notes.append(
            f"{run.repeats['comm']} repeated communication case(s): each exported from the run "
            "that started last"
        )
    comm, older, version = current_intervals(comm)
    if older:
        notes.append(
            f"the p50 intervals of {older} row(s) left out: their schema (v{version} and "
            f"before) meant another interval by ci_low_us/ci_high_us than the 95 % one of "
            f"v{SCHEMA_VERSION} (docs: upgrading.md)"
        )
    manifests = [m for m in find_run_dirs(Path(path), "").manifests.values() if m]
    starts = [t for m in manifests if (t := utc_time(m.get("started_utc")))]
    ends = [t for m in manifests if (t := utc_time(m.get("ended_utc") or m.get("started_utc")))]
    return ExportRun(
        Path(path), comm, run.manifest, notes, min(starts, default=None), max(ends, default=None)
    )


INTERVAL = ("ci_low_us", "ci_high_us")
"""The p50's 95 % interval, which the exports label so (gab's extra, bmf's bounds)."""


def current_intervals(rows: list[Row]) -> tuple[list[Row], int, int]:
    """The rows with the interval cells of a schema that meant another interval emptied (v3's
    latency intervals counted every op as independent: they covered 41-56 %), how many held
    one, and the newest such schema version (0: none)."""
    kept, older, version = [], 0, 0
    for row in rows:
        if changed_meaning("comm", INTERVAL[0], row.schema_version, SCHEMA_VERSION) is not None:
            if any(row.values.get(column, "") != "" for column in INTERVAL):
                older, version = older + 1, max(version, row.schema_version)
            row = replace(row, values={**row.values, **dict.fromkeys(INTERVAL, "")})
        kept.append(row)
    return kept, older, version


def number(row: Row, column: str) -> float | None:
    """A numeric cell; None when empty, absent or not finite."""
    value = row.metric(column)
    return value if value is not None and math.isfinite(value) else None


def case_name(row: Row, with_size: bool = True) -> str:
    """compare's row name ('all_reduce 1K float32 n=2 op=sum mode=throughput') with the backend,
    device and any non-default case column that it leaves out: unique per case of a run, and the
    same for the same case in every run (no run id, no time)."""
    key = {column: value for column, value in row.key[1:]}
    if not with_size:
        key.pop("size_bytes", None)
    extra = [f"backend={key.get('backend', '')}", f"device={key.get('device', '')}"]
    extra += [f"{c}={key[c]}" for c, default in DEFAULTS.items() if key.get(c, default) != default]
    return " ".join([row_name(key), *extra])


def utc_time(text: object) -> datetime | None:
    """A manifest's '2026-12-02T07:53:52Z' as a UTC datetime; None when absent or unreadable."""
    if not isinstance(text, str) or not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def check_unique(names: list[str]) -> None:
    """Names key the exports' entries: two rows of one name would overwrite each other."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise UsageError(f"two rows export under one name '{name}': report this as a bug")
        seen.add(name)
