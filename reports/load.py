"""Read run directories into pandas: results rows (communication and DDP), their max-over-ranks
samples and the manifests. pandas only: a report never imports torch.

    runs = load_runs([Path("results/cluster-a"), Path("results/cluster-b")])

An argument is a run directory (it holds results.csv) or a folder of them (searched recursively).
Anything a report cannot trust stops it with one line (UsageError): a missing path, an empty,
truncated or foreign CSV, a manifest of another schema version. Things that only limit what can be
shown (no samples.csv, no manifest, a run without rows) become notes the report prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import pandas as pd

from distbench.collectors.manifest import read_manifest
from distbench.collectors.migrations import columns_at, upgrade_columns
from distbench.collectors.schema import (
    MANIFEST_JSON,
    MAX_OVER_RANKS,
    RESULTS_CSV,
    SAMPLES_CSV,
    SCHEMA_VERSION,
    ResultRow,
    SampleRow,
)
from distbench.parse import UsageError
from distbench.reports.cells import (
    canonical_cells,
    convert_numeric,
    read_csv_strings,
)
from distbench.reports.kinds import (
    MATCH_KEYS,
    ROW_TYPES,
    kind_of,
    kind_of_header,
    numeric_columns,
)
from distbench.reports.outputs import is_report_dir

SAMPLE_COLUMNS = ("measurement", "rank", "trial", "iter", "time_us")
"""The samples.csv columns a report reads (loss is optional: DDP rows only)."""


@dataclass
class RunData:
    """One run directory as read from disk."""

    path: Path
    name: str
    """Unique short name of the run (its run_id, suffixed when two directories share one)."""
    argument: int
    """Index of the command-line argument it was found under."""
    kind: str
    """comm (ResultRow), ddp (DdpRow) or pipeline (PipelineRow)."""
    rows: pd.DataFrame
    samples: pd.DataFrame | None
    manifest: dict[str, Any] | None
    schema_version: int = SCHEMA_VERSION
    """The version that wrote it; its rows are already upgraded to SCHEMA_VERSION."""
    launch_manifests: tuple[dict[str, Any], ...] = ()
    """A night's launches drawn as one run (report/launch_frames.py): each launch's manifest, in
    launch order (`manifest` is the last one's); empty for a run of its own."""
    launch_numbers: tuple[int, ...] = ()
    """Their N of launch-N (a launch without rows is not drawn: 1, 2, 4)."""


@dataclass
class Loaded:
    """Every run of a report, concatenated; each frame carries `run` and `argument` columns."""

    runs: list[RunData]
    comm: pd.DataFrame
    ddp: pd.DataFrame
    samples: pd.DataFrame
    """rank -1 samples of every run: run, measurement, trial, iter, time_us."""
    notes: list[str] = field(default_factory=list)
    """What could not be shown, and why."""
    arguments: list[str] = field(default_factory=list)
    """The command-line arguments, as given (sources.argument_names names them)."""
    pipeline: pd.DataFrame = field(default_factory=pd.DataFrame)
    """`distbench pipeline` rows (PipelineRow), as comm and ddp."""


def find_run_dirs(path: Path) -> list[Path]:
    """The run directories at or below `path` (each holds results.csv), sorted, none in a report
    folder (outputs.is_report_dir)."""
    if not path.exists():
        raise UsageError(f"{path} does not exist: give a run directory or a folder of them")
    if path.is_file():
        if path.name == RESULTS_CSV:
            return [path.parent]
        raise UsageError(f"{path} is a file: give a run directory (it holds {RESULTS_CSV})")
    found = sorted({p.parent for p in path.rglob(RESULTS_CSV) if p.is_file()})
    found = [d for d in found if not any(is_report_dir(p) for p in d.parents if path in p.parents)]
    if not found:
        raise UsageError(f"{path} holds no run: no {RESULTS_CSV} in it or below it")
    return found


def schema_version_of(manifest: dict[str, Any] | None) -> int:
    """The run's schema version; a run without a manifest is read as the current version."""
    return int((manifest or {}).get("schema_version", SCHEMA_VERSION))


def upgrade_frame(frame: pd.DataFrame, kind: str, version: int) -> pd.DataFrame:
    """Rows written at `version` as the current schema has them (migrations.MIGRATIONS)."""
    added, dropped = upgrade_columns(kind, version)
    frame = frame.drop(columns=[c for c in dropped if c in frame.columns])
    for column, value in added.items():
        if column not in frame.columns:
            frame[column] = value
    return frame


def read_results_text(run_dir: Path, version: int | None = None) -> tuple[type, pd.DataFrame]:
    """results.csv of one run as strings, its columns checked against the run's schema version
    and upgraded to the current one: (ResultRow | DdpRow, rows)."""
    path = run_dir / RESULTS_CSV
    if version is None:
        version = schema_version_of(read_manifest(run_dir))
    with open(path, encoding="utf-8", errors="replace") as handle:
        header = handle.readline().strip().split(",")
    kind = kind_of_header(header)
    row_type = ROW_TYPES[kind]
    required = columns_at(kind, version)
    what = f"{RESULTS_CSV} ({row_type.__name__} columns, schema v{version})"
    frame = read_csv_strings(path, required, what)
    # read by type: pandas' False and 0.0 are distbench's false and 0 (reports/cells.py)
    return row_type, canonical_cells(
        upgrade_frame(frame, kind, version), row_type, MATCH_KEYS[kind]
    )


def read_results(run_dir: Path, version: int | None = None) -> tuple[str, pd.DataFrame]:
    """results.csv of one run: ('comm' | 'ddp', typed rows)."""
    path = run_dir / RESULTS_CSV
    row_type, frame = read_results_text(run_dir, version)
    frame = convert_numeric(frame, numeric_columns(row_type), path)
    key_numbers = ["world_size"] + (["size_bytes"] if row_type is ResultRow else [])
    for column in key_numbers:
        if frame[column].isna().any():
            raise UsageError(f"{path}: column {column} has empty cells; every row needs one")
    return kind_of(row_type), frame


def read_samples_typed(path: Path) -> pd.DataFrame | None:
    """The rank -1 rows of samples.csv by column and type (pyarrow: only SAMPLE_COLUMNS, each
    parsed once as its type, the other ranks' rows of runs before v4 dropped before pandas sees
    them); None where the file is not plainly sound: read_samples' careful path then names
    what is wrong, with its line."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    try:
        with open(path, "rb") as handle:
            header = handle.readline().decode("utf-8").strip().split(",")
            handle.seek(-1, 2)
            if handle.read(1) != b"\n" or any(c not in header for c in SAMPLE_COLUMNS):
                return None
        types = {"measurement": pa.string(), "rank": pa.int64(), "trial": pa.int64()}
        types |= {"iter": pa.int64(), "time_us": pa.float64()}
        table = pcsv.read_csv(
            path,
            convert_options=pcsv.ConvertOptions(
                column_types=types, include_columns=list(SAMPLE_COLUMNS), strings_can_be_null=False
            ),
        )
    except (OSError, UnicodeDecodeError, pa.ArrowInvalid):
        return None
    table = table.filter(pc.equal(table["rank"], MAX_OVER_RANKS))
    if any(table[c].null_count for c in SAMPLE_COLUMNS):
        return None  # an empty cell: the careful path says where
    return table.drop_columns(["rank"]).to_pandas()


def read_samples(run_dir: Path) -> pd.DataFrame | None:
    """rank -1 rows of samples.csv (None when the file is missing)."""
    path = run_dir / SAMPLES_CSV
    if not path.exists():
        return None
    typed = read_samples_typed(path)
    if typed is not None:
        return typed
    frame = read_csv_strings(path, SAMPLE_COLUMNS, SAMPLES_CSV)
    frame = convert_numeric(frame, [c for c in numeric_columns(SampleRow) if c in frame], path)
    frame = frame[frame["rank"] == MAX_OVER_RANKS]
    return frame[["measurement", "trial", "iter", "time_us"]].reset_index(drop=True)


def read_run(run_dir: Path, argument: int) -> RunData:
    manifest = read_manifest(run_dir)
    version = schema_version_of(manifest)
    kind, rows = read_results(run_dir, version)
    samples = read_samples(run_dir)
    if len(rows):
        name = str(rows["run_id"].iloc[0]) or run_dir.name
    else:
        name = str((manifest or {}).get("run_id") or run_dir.name)
    return RunData(run_dir, name, argument, kind, rows, samples, manifest, version)


def unique_names(runs: list[RunData]) -> None:
    """Two directories with the same run_id (copies) get -2, -3 ... so rows never mix."""
    seen: dict[str, int] = {}
    for run in runs:
        count = seen.get(run.name, 0) + 1
        seen[run.name] = count
        if count > 1:
            run.name = f"{run.name}-{count}"


def load_runs(paths: list[Path]) -> Loaded:
    """Every run under `paths`; raises UsageError for input a report cannot trust."""
    if not paths:
        raise UsageError("give at least one run directory, e.g. distbench report results/")
    runs: list[RunData] = []
    seen: dict[Path, Path] = {}
    notes: list[str] = []
    for argument, path in enumerate(paths):
        if is_report_dir(Path(path)):
            notes.append(f"{path} is a report folder, not a run: skipped")
            continue
        for run_dir in find_run_dirs(Path(path)):
            first = seen.setdefault(run_dir.resolve(), run_dir)
            if first is not run_dir:
                notes.append(f"{run_dir} is the run {first}, given twice: it is used once")
                continue
            runs.append(read_run(run_dir, argument))
    unique_names(runs)
    for run in runs:
        if run.manifest is None:
            notes.append(f"{run.path}: no {MANIFEST_JSON}: its hardware and software are unknown")
        elif run.manifest.get("status") not in (None, "completed"):
            notes.append(f"{run.path}: the run's status is '{run.manifest.get('status')}'")
        if not len(run.rows):
            notes.append(f"{run.path}: {RESULTS_CSV} has no rows; nothing of this run is shown")
        elif run.samples is None and run.kind == "comm":
            notes.append(f"{run.path}: no {SAMPLES_CSV}, so its figures have no sample bands")
    if not any(len(run.rows) for run in runs):
        where = ", ".join(str(p) for p in paths)
        raise UsageError(f"nothing to report: no run under {where} has a row in {RESULTS_CSV}")
    return Loaded(runs=runs, notes=notes, arguments=[str(p) for p in paths], **run_frames(runs))


def run_frames(runs: list[RunData]) -> dict[str, pd.DataFrame]:
    """Loaded's frames of `runs`: comm, ddp and pipeline rows and the samples of every run that
    holds rows, each concatenated."""
    with_rows = [run for run in runs if len(run.rows)]
    frames = {
        kind: concat_rows([r for r in with_rows if r.kind == kind], row_type)
        for kind, row_type in ROW_TYPES.items()
    }
    return {**frames, "samples": concat_samples(with_rows)}


def concat_rows(runs: list[RunData], row_type: type) -> pd.DataFrame:
    frames = [
        run.rows.assign(run=run.name, argument=run.argument, schema_version=run.schema_version)
        for run in runs
    ]
    if not frames:
        return pd.DataFrame(columns=[*[f.name for f in fields(row_type)], "run", "argument"])
    return pd.concat(frames, ignore_index=True)


def concat_samples(runs: list[RunData]) -> pd.DataFrame:
    frames = [run.samples.assign(run=run.name) for run in runs if run.samples is not None]
    if not frames:
        return pd.DataFrame(
            {
                "measurement": pd.Series(dtype=str),
                "trial": pd.Series(dtype=float),
                "iter": pd.Series(dtype=float),
                "time_us": pd.Series(dtype=float),
                "run": pd.Series(dtype=str),
            }
        )
    return pd.concat(frames, ignore_index=True)
