"""Load what compare needs from a run directory: results rows, their max-over-ranks samples and
the manifest. pandas only (a report never imports torch).

A run directory holds results.csv itself, or (a sweep) subdirectories that do: every results.csv
below the directory is read, and each row's samples are looked up in the samples.csv next to it.
Cells are kept as strings so that key columns compare exactly; metrics are converted on use.
Files are read, and refused when damaged, by the report's loader (reports/load.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from distbench.collectors.schema import (
    COMM_CASE_COLUMNS,
    DDP_CASE_COLUMNS,
    RESULTS_CSV,
    SCHEMA_VERSION,
    DdpRow,
)
from distbench.parse import UsageError
from distbench.reports.load import (
    convert_numeric,
    numeric_columns,
    read_manifest,
    read_results_text,
    read_samples,
    schema_version_of,
)

COMM_KEY = (*COMM_CASE_COLUMNS, "size_bytes")
"""Columns that say what a communication row measured: rows of two runs match on all of them."""

DDP_KEY = ("primitive", *DDP_CASE_COLUMNS)
"""The same for DDP training-step rows (results.csv with a `strategy` column)."""


@dataclass(frozen=True)
class Row:
    """One results row with its samples."""

    key: tuple[tuple[str, str], ...]
    """(column, value) pairs identifying what was measured."""
    kind: str
    """comm or ddp."""
    values: dict[str, str]
    """Every cell of the row, as written."""
    samples_us: tuple[float, ...]
    """The max-over-ranks samples (samples.csv rank -1) in trial order; empty when missing."""

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
    """Rows whose key appeared earlier in the run (the later one is kept)."""
    schema_version: int = SCHEMA_VERSION
    """The oldest schema version among its run directories (rows are upgraded on load)."""


def load_samples(run_dir: Path) -> dict[str, tuple[float, ...]]:
    """measurement -> max-over-ranks samples, ordered by trial and iteration."""
    frame = read_samples(run_dir)
    if frame is None or frame.empty:
        return {}
    frame = frame.sort_values(["measurement", "trial", "iter"], kind="stable")
    return {
        str(measurement): tuple(float(t) for t in group["time_us"])
        for measurement, group in frame.groupby("measurement", sort=False)
    }


def find_results(path: Path) -> list[Path]:
    """results.csv of the directory itself, else every one below it (a sweep's runs)."""
    own = path / RESULTS_CSV
    if own.exists():
        return [own]
    return sorted(path.rglob(RESULTS_CSV))


def read_manifest_file(path: Path) -> dict[str, Any]:
    """A run's manifest ({} when it has none); unreadable or another schema: UsageError."""
    return read_manifest(path.parent) or {}


def load_run(path: Path) -> Run:
    """Read a run directory with the report's checks (reports/load.py): UsageError when it is
    missing, empty, truncated, foreign, holds a non-number, or is of another schema version."""
    path = Path(path)
    if not path.is_dir():
        raise UsageError(f"{path} is not a run directory (it does not exist or is a file)")
    run_dirs = [results.parent for results in find_results(path)]
    if not run_dirs:
        raise UsageError(f"{path} holds no {RESULTS_CSV}: give a run directory or a baseline name")
    manifests = {run_dir: read_manifest(run_dir) for run_dir in {path, *run_dirs}}
    top = manifests[path] or next((m for d in run_dirs if (m := manifests[d])), None)
    versions = {d: schema_version_of(manifests[d] or top) for d in run_dirs}
    run = Run(path=path, manifest=top or {}, schema_version=min(versions.values()))
    for run_dir in run_dirs:
        row_type, frame = read_results_text(run_dir, versions[run_dir])
        convert_numeric(frame.copy(), numeric_columns(row_type), run_dir / RESULTS_CSV)
        kind = "ddp" if row_type is DdpRow else "comm"
        key_columns = DDP_KEY if kind == "ddp" else COMM_KEY
        samples = load_samples(run_dir)
        for record in frame.to_dict(orient="records"):
            values = {str(k): str(v) for k, v in record.items()}
            key = (("kind", kind), *((c, values[c]) for c in key_columns))
            if key in run.rows:
                run.duplicates += 1
            run.rows[key] = Row(
                key=key,
                kind=kind,
                values=values,
                samples_us=samples.get(values.get("measurement", ""), ()),
            )
    return run
