"""The points of a history: every case of every night as one number, its judged metric, with
that night's launches. Runs are read by the report's loader (reports/load.py: the checks, the
schema upgrade of older versions) and a case measured twice in one run is taken from the sub-run
that started last (reports/repeats.py run_order), as compare and report do.

    points = read_points(Path("results/nightly-20261129"))

A night's points hold every time statistic of a case (STATS: min, p50, mean, max, p95, p99;
comm rows' time_us_*, DDP rows' step_time_us_*), so that the cache reads a run once whatever
`--metric` asks; history judges one of them (build.py: one series per case), by default the
nightly gate's, the fastest trial (min: ci/nightly.sh gates on it because it moves least between
launches of a shared box). A night's value is the mean log value of its launches (a geometric
mean); `low` and `high` are its lowest and highest launch, `spread` the sample variance of the
launches' log values (nan with one launch), from which history learns the launch noise of a
night value. busbw and algbw are not series: busbw is size / p50, the p50's series counted
twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from distbench.collectors.rundir import MANIFEST_JSON, read_night_state
from distbench.collectors.schema import COMM_MATCH_KEY, DDP_MATCH_KEY
from distbench.parse import format_asked_size
from distbench.reports.compare.sides import launch_dirs
from distbench.reports.kinds import CASE_DEFAULTS
from distbench.reports.load import read_results
from distbench.reports.runs import find_run_dirs


@dataclass(frozen=True)
class Metric:
    """The series of a row kind: which column (a time: larger is slower)."""

    name: str
    kind: str
    column: str
    unit: str


STATS = ("min", "p50", "mean", "max", "p95", "p99")
"""The time statistics a night's points hold (module docstring)."""
DEFAULT_STAT = "min"
"""What history judges unless --metric says: the nightly gate's metric, the fastest trial."""
PREFIXES = {"comm": "time_us_", "ddp": "step_time_us_"}
"""The column of a statistic, by row kind: time_us_p50, step_time_us_p50 ..."""

METRICS = tuple(
    Metric(prefix + stat, kind, prefix + stat, "us")
    for kind, prefix in PREFIXES.items()
    for stat in STATS
)
"""Every series a row kind may give (module docstring)."""

METRIC_BY_NAME = {m.name: m for m in METRICS}


def metric_names(stat: str) -> frozenset[str]:
    """The points' metric names of one statistic: {'time_us_p50', 'step_time_us_p50'}."""
    return frozenset(prefix + stat for prefix in PREFIXES.values())


def stat_of(name: str) -> str:
    """'step_time_us_p50' -> 'p50'."""
    return name.rsplit("_", 1)[-1]


POINT_COLUMNS = ("case", "kind", "key", "metric", "value", "low", "high", "launches", "spread")
"""A night's points; the run's own facts (path, start, revision, version) are on RunInfo."""


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


def incomplete_reason(path: Path, manifests: bool = True) -> str | None:
    """Why `path` is not a whole night, or None. ci/nightly.sh marks a night partial in
    NIGHT_STATE from its first launch (of several) until its last completes, and on Ctrl-C or a
    failure; a run's manifest says `running` from its start until it ends (interrupted, failed,
    completed). So a manifest still `running` is a night still running, or one killed before
    it could say so (SIGKILL, a reboot): --resume is right only once nothing runs there. A
    manifest that ended otherwise is a night cut short, which ci/nightly.sh --resume finishes.
    manifests=False (a run the cache holds unchanged, complete when cached): the night's state
    alone, unless it is partial. Such a night's rows are a part of it: history skips it."""
    values = read_night_state(path)
    partial = values is not None and values.get("status") != "complete"
    if not manifests and not partial:
        return None
    ended = unfinished(path)
    running = [(where, host) for where, status, host in ended if status == "running"]
    if running:
        where, host = running[0]
        on = f" on {host}" if host else ""
        nightly = values is not None
        finish = f"ci/nightly.sh --resume {path}" if nightly else "its command with --resume"
        return (
            f"status running{where}: still running, or killed before it could say so; let it "
            f"finish, and only if no sweep runs there any more{on}, {finish} finishes it"
        )
    if ended:
        where, status, _host = ended[0]
        if partial:
            return f"cut short, status {status}{where}: ci/nightly.sh --resume {path} finishes it"
        return f"status {status}{where}"
    if partial:
        return (
            f"partial night, every launch so far completed: ci/nightly.sh is between two "
            f"launches, or was stopped there; if it is not running, ci/nightly.sh --resume {path} "
            "finishes it"
        )
    return None


def unfinished(path: Path) -> list[tuple[str, str, str]]:
    """(where: '' or ' in launch-2', status, host) of each manifest of `path` (the run's, a
    launch's) whose status is not completed."""
    out = []
    for manifest in sorted([path / MANIFEST_JSON, *path.glob(f"*/{MANIFEST_JSON}")]):
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
            status = data.get("status")
        except (OSError, ValueError, AttributeError):
            continue  # missing or unreadable: the loader says what is wrong with it
        if status not in (None, "completed"):
            where = "" if manifest.parent == path else f" in {manifest.parent.name}"
            out.append((where, str(status), str(data.get("host") or "")))
    return out


QUIET_VALUES = CASE_DEFAULTS
"""Key columns left out of a case's name at these values (every row's unless an option changed
it); another value is named with its column: api=functional, graph=true. A new user read
`all_reduce n=2 gloo cpu nnodes=1 float32 sum throughput c10d out false regular 1K`."""


def case_label(kind: str, values: dict[str, Any], requested: object = None) -> str:
    """'all_reduce n=2 gloo cpu float32 sum throughput 1M': the match key, the empty cells and
    QUIET_VALUES out,
    and the size as asked (`requested`: requested_bytes; 64K, not the 65520 an all_gather at 3
    ranks measures)."""
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
        if str(value) == QUIET_VALUES.get(column):
            continue  # the default every row has: it tells no case apart, and reads as noise
        named = column in ("root", "src", "dst", "nnodes", *QUIET_VALUES)
        parts.append(f"{column}={value}" if named else str(value))
    return " ".join([*parts, format_asked_size(values["size_bytes"], requested)])


def points_of(kind: str, rows: pd.DataFrame) -> pd.DataFrame:
    """One point per row of a launch and time statistic its rows hold (a kind without a series,
    e.g. pipeline: none); `key` is the match key as JSON (exact strings)."""
    metrics = [m for m in METRICS if m.kind == kind and m.column in rows]
    if not metrics or not len(rows):
        return empty_points()
    key_columns = list(DDP_MATCH_KEY if kind == "ddp" else COMM_MATCH_KEY)
    records = rows[key_columns].astype(str).to_dict(orient="records")
    asked = rows["requested_bytes"].tolist() if "requested_bytes" in rows else [None] * len(rows)
    cases = [
        case_label(kind, {str(k): v for k, v in r.items()}, a)
        for r, a in zip(records, asked, strict=True)
    ]
    keys = [json.dumps(r, separators=(",", ":")) for r in records]
    frames = []
    for metric in metrics:
        value = pd.to_numeric(rows[metric.column], errors="coerce").astype(float).to_numpy()
        frames.append(
            pd.DataFrame(
                {
                    "case": cases,
                    "kind": kind,
                    "key": keys,
                    "metric": metric.name,
                    "value": value,
                    "low": value,
                    "high": value,
                    "launches": 1,
                    "spread": np.nan,
                }
            )
        )
    points = pd.concat(frames, ignore_index=True)
    return points[points["value"].notna()].reset_index(drop=True)  # a statistic not recorded


def read_points(path: Path) -> tuple[RunInfo, pd.DataFrame]:
    """One night's facts and points; UsageError for anything the report's loader refuses. A
    night of several launches (ci/nightly.sh --launches N: launch-1, launch-2 ...) gives one
    point per case (pool_points)."""
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
    """One point per case from several launches' (read_points): the mean of their log values,
    the lowest and highest, how many, and the sample variance of the logs; a case missing from
    some launches is pooled from the others."""
    points = pd.concat(per_launch, ignore_index=True)
    points["log_value"] = np.log(points["value"].where(points["value"] > 0))
    pooled = points.groupby(["key", "metric"], sort=False, as_index=False).agg(
        case=("case", "first"),
        kind=("kind", "first"),
        log_value=("log_value", "mean"),
        spread=("log_value", "var"),
        launches=("log_value", "count"),
        low=("low", "min"),
        high=("high", "max"),
    )
    pooled["value"] = np.exp(pooled["log_value"])
    return pooled[list(POINT_COLUMNS)]


def empty_points() -> pd.DataFrame:
    types = {"launches": int, **{c: float for c in ("value", "low", "high", "spread")}}
    return pd.DataFrame({c: pd.Series(dtype=types.get(c, str)) for c in POINT_COLUMNS})
