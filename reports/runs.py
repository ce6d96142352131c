"""Load what compare needs from a run directory: results rows, their max-over-ranks samples and
the manifest. pandas only (a report never imports torch).

A run directory holds results.csv itself, or (a sweep) subdirectories that do: every results.csv
below the directory is read, and each row's samples are looked up in the samples.csv next to it.
Cells are kept as strings so that key columns compare exactly; metrics are converted on use.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from distbench.collectors.schema import (
    MANIFEST_JSON,
    MAX_OVER_RANKS,
    RESULTS_CSV,
    SAMPLES_CSV,
    SCHEMA_VERSION,
)
from distbench.parse import UsageError

COMM_KEY = (
    "primitive",
    "backend",
    "device",
    "world_size",
    "nnodes",
    "dtype",
    "op",
    "size_bytes",
    "mode",
    "root",
    "src",
    "dst",
    "pattern",
)
"""Columns that say what a communication row measured: rows of two runs match on all of them."""

DDP_KEY = (
    "primitive",
    "strategy",
    "backend",
    "device",
    "world_size",
    "nnodes",
    "model",
    "dtype",
    "batch_size",
    "bucket_mb",
    "gradient_as_bucket_view",
    "static_graph",
    "avg_every",
)
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


def read_csv(path: Path) -> pd.DataFrame:
    """Every cell as a string; empty cells stay empty strings."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def row_kind(columns: list[str]) -> str:
    return "ddp" if "strategy" in columns else "comm"


def load_samples(path: Path) -> dict[str, tuple[float, ...]]:
    """measurement -> max-over-ranks samples, ordered by trial and iteration."""
    if not path.exists():
        return {}
    frame = read_csv(path)
    if frame.empty or "rank" not in frame.columns:
        return {}
    frame = frame[frame["rank"].astype(int) == MAX_OVER_RANKS].copy()
    frame["trial_n"] = frame["trial"].astype(int)
    frame["iter_n"] = frame["iter"].astype(int)
    frame["time_n"] = frame["time_us"].astype(float)
    frame = frame.sort_values(["measurement", "trial_n", "iter_n"], kind="stable")
    return {
        str(measurement): tuple(float(t) for t in group["time_n"])
        for measurement, group in frame.groupby("measurement", sort=False)
    }


def find_results(path: Path) -> list[Path]:
    """results.csv of the directory itself, else every one below it (a sweep's runs)."""
    own = path / RESULTS_CSV
    if own.exists():
        return [own]
    return sorted(path.rglob(RESULTS_CSV))


def read_manifest_file(path: Path) -> dict[str, Any]:
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError) as error:
        raise UsageError(f"{path} is not a readable manifest: {error}") from None


def load_run(path: Path) -> Run:
    """Read a run directory; UsageError when it is missing, empty or of another schema."""
    path = Path(path)
    if not path.is_dir():
        raise UsageError(f"{path} is not a run directory (it does not exist or is a file)")
    results = find_results(path)
    if not results:
        raise UsageError(f"{path} holds no {RESULTS_CSV}: give a run directory or a baseline name")
    manifests = [p.parent / MANIFEST_JSON for p in results]
    top = path / MANIFEST_JSON
    manifest_path = top if top.exists() else next((m for m in manifests if m.exists()), None)
    manifest = read_manifest_file(manifest_path) if manifest_path else {}
    for candidate in {top, *manifests}:
        if candidate.exists():
            version = read_manifest_file(candidate).get("schema_version", SCHEMA_VERSION)
            if version != SCHEMA_VERSION:
                raise UsageError(
                    f"{candidate} has schema version {version}; this distbench reads version "
                    f"{SCHEMA_VERSION}: compare runs made by the same distbench version"
                )
    run = Run(path=path, manifest=manifest)
    for results_path in results:
        frame = read_csv(results_path)
        kind = row_kind(list(frame.columns))
        key_columns = [c for c in (DDP_KEY if kind == "ddp" else COMM_KEY) if c in frame.columns]
        samples = load_samples(results_path.parent / SAMPLES_CSV)
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
