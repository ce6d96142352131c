"""Load what compare needs from a run directory: results rows, their independent samples and the
manifest. pandas only (a report never imports torch).

A run directory holds results.csv itself, or (a sweep) subdirectories that do: every results.csv
below the directory is read, and each row's samples are looked up in the samples.csv next to it.
Cells are kept as strings so that key columns compare exactly; metrics are converted on use.
Files are read, and refused when damaged, by the report's loader (reports/load.py).

The rank test needs independent samples, so each row's max-over-ranks samples are reduced to the
unit that is independent (`units_of`): one per trial for communication rows (throughput mode
writes one sample per trial; latency mode's iterations of one trial are reduced to their median),
one per timed window for DDP rows (schema v2: windows of steps between barriers). Schema v1 DDP
samples are single steps of one window, not independent: those rows get no units, and compare
says so. A row that appears more than once (a sweep of several runs, a resumed run) is taken from
the run that started last (reports/repeats.py: the one rule that report follows too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from distbench.collectors.manifest import read_manifest
from distbench.collectors.schema import (
    RESULTS_CSV,
    SCHEMA_VERSION,
)
from distbench.parse import UsageError
from distbench.reports.cells import check_numeric
from distbench.reports.kinds import MATCH_KEYS, WINDOWED, kind_of, numeric_columns
from distbench.reports.load import (
    read_results_text,
    read_samples,
    schema_version_of,
)
from distbench.reports.repeats import run_order

DDP_WINDOWS_SINCE = 2
"""The schema version from which a DDP sample is a window of steps between barriers (#10)."""


@dataclass(frozen=True)
class Row:
    """One results row with its independent samples."""

    key: tuple[tuple[str, str], ...]
    """(column, value) pairs identifying what was measured."""
    kind: str
    """comm or ddp."""
    values: dict[str, str]
    """Every cell of the row, as written (upgraded to the current schema)."""
    units_us: tuple[float, ...]
    """One time per independent unit (`unit`), in order; empty when there is none."""
    unit: str = "trial"
    """What one of units_us is: trial, window, or why there is none."""
    schema_version: int = SCHEMA_VERSION
    """The schema version of the run directory the row was read from."""
    run: str = ""
    """The run directory (name) it was read from."""

    def metric(self, column: str) -> float | None:
        """A numeric cell, None when absent or empty."""
        text = self.values.get(column, "")
        try:
            return float(text) if text != "" else None
        except ValueError:
            return None


@dataclass
class Run:
    """A loaded run directory (or baseline)."""

    path: Path
    manifest: dict[str, Any]
    rows: dict[tuple[tuple[str, str], ...], Row] = field(default_factory=dict)
    duplicates: int = 0
    """Rows whose key appeared earlier (in a run that started earlier, or earlier in its file)."""
    read: dict[str, int] = field(default_factory=dict)
    """Rows read per kind (comm, ddp, ...), repeats included."""
    repeats: dict[str, int] = field(default_factory=dict)
    """`duplicates` per kind."""
    duplicate_runs: tuple[str, ...] = ()
    """The run directories that held repeated rows, by start time (the last one's rows win)."""
    schema_version: int = SCHEMA_VERSION
    """The oldest schema version among its run directories (rows are upgraded on load)."""


def units_of(frame: pd.DataFrame, kind: str, version: int) -> tuple[tuple[float, ...], str]:
    """One measurement's max-over-ranks samples reduced to independent units (module docstring)."""
    if kind in WINDOWED:
        if version < DDP_WINDOWS_SINCE:
            return (), f"v{version} DDP samples are single steps, not independent"
        return tuple(float(t) for t in frame["time_us"]), "window"
    per_trial = frame.groupby("trial", sort=True)["time_us"].median()
    return tuple(float(t) for t in per_trial), "trial"


def load_units(run_dir: Path, kind: str, version: int) -> dict[str, tuple[tuple[float, ...], str]]:
    """measurement -> (independent units, what a unit is): units_of of each measurement, for
    every measurement at once (one groupby, not one per measurement: 10,000 rows took ~6 s)."""
    frame = read_samples(run_dir)
    if frame is None or frame.empty:
        return {}
    frame = frame.sort_values(["measurement", "trial", "iter"], kind="stable")
    if kind in WINDOWED and version < DDP_WINDOWS_SINCE:
        empty = units_of(frame.iloc[:0], kind, version)
        return {str(m): empty for m in frame["measurement"].unique()}
    if kind in WINDOWED:
        names, values, unit = frame["measurement"], frame["time_us"], "window"
    else:
        per_trial = frame.groupby(["measurement", "trial"], sort=True)["time_us"].median()
        names, values, unit = per_trial.index.get_level_values(0), per_trial, "trial"
    names_list = [str(n) for n in names]
    numbers = values.to_numpy(dtype=float).tolist()
    starts = [i for i in range(len(names_list)) if i == 0 or names_list[i] != names_list[i - 1]]
    return {
        names_list[a]: (tuple(numbers[a:b]), unit)
        for a, b in zip(starts, [*starts[1:], len(names_list)], strict=True)
    }


def find_results(path: Path) -> list[Path]:
    """results.csv of the directory itself, else every one below it (a sweep's runs)."""
    own = path / RESULTS_CSV
    if own.exists():
        return [own]
    return sorted(path.rglob(RESULTS_CSV))


@dataclass(frozen=True)
class RunDirs:
    """The run directories below a path (each holds results.csv), in the order they started
    (the last to start wins a repeat), with their manifests."""

    dirs: list[Path]
    manifests: dict[Path, dict[str, Any] | None]
    """Each run directory's, and the path's own (None: none there)."""
    top: dict[str, Any]
    """The path's own manifest, else the first run directory's that has one; {} for none."""
    versions: dict[Path, int]
    """Each run directory's schema version (its manifest's, else top's)."""


def find_run_dirs(path: Path, hint: str) -> RunDirs:
    """The run directories below `path`; UsageError where it is not a directory or holds no
    results.csv (`hint`: what to give instead)."""
    if not path.is_dir():
        raise UsageError(f"{path} is not a run directory (it does not exist or is a file)")
    dirs = [results.parent for results in find_results(path)]
    if not dirs:
        raise UsageError(f"{path} holds no {RESULTS_CSV}: {hint}")
    manifests = {run_dir: read_manifest(run_dir) for run_dir in {path, *dirs}}
    top = manifests[path] or next((m for d in dirs if (m := manifests[d])), None) or {}
    dirs.sort(key=lambda d: run_order(manifests[d], d))
    versions = {d: schema_version_of(manifests[d] or top) for d in dirs}
    return RunDirs(dirs, manifests, top, versions)


def read_manifest_file(path: Path) -> dict[str, Any]:
    """A run's manifest ({} when it has none); unreadable or another schema: UsageError."""
    return read_manifest(path.parent) or {}


def load_run(path: Path) -> Run:
    """Read a run directory with the report's checks (reports/load.py): UsageError when it is
    missing, empty, truncated, foreign, holds a non-number, or is of a newer schema version."""
    path = Path(path)
    located = find_run_dirs(path, "give a run directory or a baseline name")
    run_dirs, versions = located.dirs, located.versions
    run = Run(path=path, manifest=located.top, schema_version=min(versions.values()))
    holders: dict[tuple[tuple[str, str], ...], Path] = {}
    repeated: set[Path] = set()
    for run_dir in run_dirs:
        row_type, frame = read_results_text(run_dir, versions[run_dir])
        check_numeric(frame, numeric_columns(row_type), run_dir / RESULTS_CSV)
        kind = kind_of(row_type)
        key_columns = MATCH_KEYS[kind]
        units = load_units(run_dir, kind, versions[run_dir])
        name = str(run_dir.relative_to(path)) if run_dir != path else path.name
        names = [str(c) for c in frame.columns]
        cells = [[str(v) for v in frame.iloc[:, i].tolist()] for i in range(len(names))]
        for values in (dict(zip(names, row, strict=True)) for row in zip(*cells, strict=True)):
            key = (("kind", kind), *((c, values[c]) for c in key_columns))
            run.read[kind] = run.read.get(kind, 0) + 1
            if key in run.rows:
                run.duplicates += 1
                run.repeats[kind] = run.repeats.get(kind, 0) + 1
                repeated |= {holders[key], run_dir}
            found, unit = units.get(values.get("measurement", ""), ((), "no samples"))
            run.rows[key] = Row(key, kind, values, found, unit, versions[run_dir], name)
            holders[key] = run_dir
    run.duplicate_runs = tuple(
        str(d.relative_to(path)) if d != path else path.name for d in run_dirs if d in repeated
    )
    return run
