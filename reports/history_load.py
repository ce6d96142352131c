"""The points of a history: every case of every run as one number per metric, with that night's
spread. Runs are read by the report's loader (reports/load.py: the checks, the schema upgrade of
older versions) and a case measured twice in one run is taken from the sub-run that started last
(reports/repeats.py run_order), as compare and report do.

    points = read_points(Path("results/nightly-20261129"))

A point is one (case, metric) of one run: `value` is the row's median (time_us_p50, or the DDP
step_time_us_p50) or its bus bandwidth (busbw_GBps; DDP: samples_per_s), `low` and `high` the
spread of that night's samples (time_us_min .. time_us_max, and the bandwidth at those times).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from distbench.collectors.rundir import MANIFEST_JSON, NIGHT_STATE
from distbench.collectors.schema import COMM_MATCH_KEY, DDP_MATCH_KEY
from distbench.parse import format_size
from distbench.reports.launches import launch_dirs
from distbench.reports.load import read_results
from distbench.reports.runs import find_run_dirs


@dataclass(frozen=True)
class Metric:
    """One series of a case: which column, whether larger is better, and its spread columns."""

    name: str
    kind: str
    column: str
    unit: str
    higher_is_better: bool
    low: str
    """Column giving the spread's low end (for a rate: the time whose rate is the low end)."""
    high: str


METRICS = (
    Metric("time_us_p50", "comm", "time_us_p50", "us", False, "time_us_min", "time_us_max"),
    Metric("busbw_GBps", "comm", "busbw_GBps", "GB/s", True, "time_us_max", "time_us_min"),
    Metric(
        "step_time_us_p50",
        "ddp",
        "step_time_us_p50",
        "us",
        False,
        "step_time_us_min",
        "step_time_us_max",
    ),
    Metric(
        "samples_per_s",
        "ddp",
        "samples_per_s",
        "samples/s",
        True,
        "step_time_us_max",
        "step_time_us_min",
    ),
)
"""The two series of each row kind: its time and its rate. A rate's spread is the rate at the
night's slowest and fastest sample (rate x p50 / time): the same samples, seen as a rate."""

METRIC_BY_NAME = {m.name: m for m in METRICS}
POINT_COLUMNS = ("case", "kind", "key", "metric", "value", "low", "high")
"""A run's points; the run's own facts (path, start, revision, version) are on RunInfo."""


@dataclass(frozen=True)
class RunInfo:
    """One night: a run directory given to history (a sweep's folder counts as one night)."""

    path: str
    """The directory, resolved: what the cache keys on."""
    name: str
    started_utc: str
    git_sha: str
    schema_version: int
    """The oldest schema version among its run directories."""

    @property
    def label(self) -> str:
        """'2026-11-29 02235a9': the date and git revision the trend panels show."""
        return f"{self.started_utc[:10] or '?'} {self.git_sha[:7] or '?'}".strip()


def incomplete_reason(path: Path) -> str | None:
    """Why `path` is not a whole night, or None: ci/nightly.sh marked it partial (NIGHT_STATE:
    Ctrl-C, a crash; its --resume finishes it), or a manifest of it (the run's, or a launch's)
    says the run did not complete. Such a night's rows are a part of it: history skips it."""
    state = path / NIGHT_STATE
    if state.is_file():
        lines = state.read_text(encoding="utf-8", errors="replace").splitlines()
        values = dict(line.split("=", 1) for line in lines if "=" in line and line[0] != "#")
        if values.get("status") != "complete":
            return f"partial night: ci/nightly.sh --resume {path} finishes it"
    for manifest in sorted([path / MANIFEST_JSON, *path.glob(f"*/{MANIFEST_JSON}")]):
        try:
            status = json.loads(manifest.read_text(encoding="utf-8")).get("status")
        except (OSError, ValueError, AttributeError):
            continue  # missing or unreadable: the loader says what is wrong with it
        if status not in (None, "completed"):
            where = "" if manifest.parent == path else f" in {manifest.parent.name}"
            return f"status {status}{where}"
    return None


def case_label(kind: str, values: dict[str, Any]) -> str:
    """'all_reduce gloo cpu n=2 float32 sum throughput 1M': the match key, the empty cells out."""
    if kind == "ddp":
        skip = {"primitive", "world_size"}
        parts = [f"ddp n={values['world_size']}"]
        parts += [f"{c}={values[c]}" for c in DDP_MATCH_KEY if c not in skip and values[c] != ""]
        return " ".join(parts)
    parts = [str(values["primitive"]), f"n={values['world_size']}"]
    for column in COMM_MATCH_KEY[1:]:
        value = values[column]
        if column in ("world_size", "size_bytes") or value in ("", None):
            continue
        parts.append(f"{column}={value}" if column in ("root", "src", "dst", "nnodes") else value)
    return " ".join([*parts, format_size(int(values["size_bytes"]))])


def points_of(kind: str, rows: pd.DataFrame) -> pd.DataFrame:
    """One point per (row, metric of its kind); `key` is the match key as JSON (exact strings)."""
    key_columns = list(DDP_MATCH_KEY if kind == "ddp" else COMM_MATCH_KEY)
    records = rows[key_columns].astype(str).to_dict(orient="records")
    keys = [json.dumps(r, separators=(",", ":")) for r in records]
    cases = [case_label(kind, {str(k): v for k, v in r.items()}) for r in records]
    frames = []
    for metric in (m for m in METRICS if m.kind == kind):
        value = rows[metric.column].astype(float)
        low, high = rows[metric.low].astype(float), rows[metric.high].astype(float)
        if metric.higher_is_better:  # a rate: the same samples' times as rates
            p50 = rows[METRICS[0].column if kind == "comm" else METRICS[2].column].astype(float)
            low, high = value * p50 / low, value * p50 / high
        frames.append(
            pd.DataFrame(
                {
                    "case": cases,
                    "kind": kind,
                    "key": keys,
                    "metric": metric.name,
                    "value": value.to_numpy(),
                    "low": low.to_numpy(),
                    "high": high.to_numpy(),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def read_points(path: Path) -> tuple[RunInfo, pd.DataFrame]:
    """One night's facts and points; UsageError for anything the report's loader refuses. A
    night of several launches (ci/nightly.sh --launches N: launch-1, launch-2 ...) gives one
    point per case, pooled as compare pools them (reports/launches.py): the geometric mean of
    the launches' values, the spread from the lowest low to the highest high."""
    found = find_run_dirs(path, "give run directories of nightly runs")
    top, versions = found.top, found.versions
    launches = launch_dirs(path)
    groups = [[d for d in found.dirs if d.is_relative_to(launch)] for launch in launches]
    per_launch = [launch_points(dirs, versions) for dirs in groups or [found.dirs]]
    points = pool_points(per_launch) if len(per_launch) > 1 else per_launch[0]
    started = [str(m.get("started_utc") or "") for m in found.manifests.values() if m]
    info = RunInfo(
        path=str(path.resolve()),
        name=path.name,
        started_utc=str(top.get("started_utc") or min(started, default="")),
        git_sha=str(top.get("distbench_git_sha") or ""),
        schema_version=min(versions.values()),
    )
    return info, points


def launch_points(run_dirs: list[Path], versions: dict[Path, int]) -> pd.DataFrame:
    """The points of one launch's run directories; the last to start wins a repeat."""
    frames = []
    for run_dir in run_dirs:
        kind, rows = read_results(run_dir, versions[run_dir])
        if len(rows):
            frames.append(points_of(kind, rows))
    points = pd.concat(frames, ignore_index=True) if frames else empty_points()
    return points.drop_duplicates(["key", "metric"], keep="last").reset_index(drop=True)


def pool_points(per_launch: list[pd.DataFrame]) -> pd.DataFrame:
    """One point per (case, metric) from several launches' (read_points): a case missing from
    some launches is pooled from the others."""
    points = pd.concat(per_launch, ignore_index=True)
    points["log_value"] = np.log(points["value"].where(points["value"] > 0))
    pooled = points.groupby(["key", "metric"], sort=False, as_index=False).agg(
        case=("case", "first"),
        kind=("kind", "first"),
        log_value=("log_value", "mean"),
        low=("low", "min"),
        high=("high", "max"),
    )
    pooled["value"] = np.exp(pooled["log_value"])
    return pooled[list(POINT_COLUMNS)]


def empty_points() -> pd.DataFrame:
    return pd.DataFrame(
        {c: pd.Series(dtype=float if c in POINT_COLUMNS[4:] else str) for c in POINT_COLUMNS}
    )
