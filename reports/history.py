"""`distbench history`: many nightly runs, each case a time series of its median and its
bandwidth, and the change points where a level stepped and stayed.

    result = run_history(HistoryArgs(run_dirs=("results/nightly-1", ...), out="history"))

Runs are ordered by their manifest's start time. A series is cut where its column's meaning
changed between two schema versions (collectors/migrations.py): no change point is ever found
across such a cut, and the cut is listed as "definition changed in vN" instead. Writes
history.csv (every point), history.md, history.html (reports/history_render.py).
"""

from __future__ import annotations

import glob as globbing
import os
from dataclasses import dataclass
from pathlib import Path
from statistics import median

import pandas as pd

from distbench.collectors.migrations import changed_meaning
from distbench.parse import UsageError
from distbench.reports.history_detect import ALPHA, MIN_CHANGE, Candidate, candidates, significant
from distbench.reports.history_load import METRIC_BY_NAME, RunInfo, incomplete_reason

EXIT_REGRESSION = 1


@dataclass(frozen=True)
class HistoryArgs:
    run_dirs: tuple[str, ...] = ()
    glob: str | None = None
    out: str = "history"
    fail_on_regression: int | None = None
    """Exit 1 when a regressing change point falls within the last N runs."""
    min_change: float = MIN_CHANGE
    cache: str | None = None
    """A DuckDB file, 'off', or None for $XDG_CACHE_HOME/distbench/history.duckdb."""


@dataclass(frozen=True)
class ChangePoint:
    case: str
    kind: str
    metric: str
    position: int
    """Index (by start time) of the first run after the change."""
    run: RunInfo
    before: float
    """Median of the nights since the previous change point (or the series' start)."""
    after: float
    change: float
    """after / before - 1."""
    regression: bool
    p_value: float
    q_value: float
    nights_before: int
    nights_after: int

    @property
    def direction(self) -> str:
        return "regression" if self.regression else "improvement"


@dataclass(frozen=True)
class DefinitionCut:
    """A series cut where its column changed meaning: nothing is compared across it."""

    metric: str
    version: int
    run: RunInfo
    series: int


@dataclass(frozen=True)
class History:
    runs: list[RunInfo]
    points: pd.DataFrame
    """Every point: run (position), case, kind, key, metric, value, low, high, segment."""
    change_points: list[ChangePoint]
    cuts: list[DefinitionCut]


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "distbench" / "history.duckdb"


def resolve_runs(run_dirs: tuple[str, ...], pattern: str | None) -> list[Path]:
    """The run directories named, then those the glob matches (sorted); each once."""
    if run_dirs and pattern:
        raise UsageError("give run directories or --glob, not both")
    if pattern is not None:
        matched = sorted(p for p in globbing.glob(pattern) if os.path.isdir(p))
        if not matched:
            raise UsageError(
                f"--glob '{pattern}' matches no directory: quote it, e.g. "
                "--glob 'results/nightly-*'"
            )
        paths = [Path(p) for p in matched]
    else:
        paths = [Path(p) for p in run_dirs]
    if len(paths) < 2:
        raise UsageError("history needs at least two runs: give RUN_DIR... or --glob PATTERN")
    unique: dict[Path, Path] = {}
    for path in paths:
        if not path.is_dir():
            raise UsageError(f"{path} is not a run directory (it does not exist or is a file)")
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def skip_incomplete(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The runs that completed, and a note for each one skipped (history_load.incomplete_reason:
    a night ci/nightly.sh left partial, a run that did not complete)."""
    kept, skipped = [], []
    for path in paths:
        reason = incomplete_reason(path)
        if reason is None:
            kept.append(path)
        else:
            skipped.append(f"{path} ({reason})")
    if len(kept) < 2:
        raise UsageError(
            f"history needs at least two runs that completed; of {len(paths)}, "
            f"{len(skipped)} did not: {'; '.join(skipped)}"
        )
    return kept, skipped


def load(paths: list[Path], cache: str | None) -> tuple[list[RunInfo], pd.DataFrame]:
    from distbench.reports.history_cache import PointCache, read_uncached

    if cache == "off":
        return read_uncached(paths)
    with PointCache.open(Path(cache) if cache else default_cache()) as store:
        return store.load(paths)


def build_history(paths: list[Path], cache: str | None, min_change: float) -> History:
    infos, points = load(paths, cache)
    order = sorted(range(len(infos)), key=lambda i: (infos[i].started_utc, infos[i].path))
    runs = [infos[i] for i in order]
    position = {info.path: i for i, info in enumerate(runs)}
    version = {info.path: info.schema_version for info in runs}
    points = points.assign(
        run=points["path"].map(position).astype(int),
        schema_version=points["path"].map(version).astype(int),
    )
    points = points.sort_values(["kind", "key", "metric", "run"], kind="stable")
    points = points[points["value"].notna() & (points["value"] > 0)].reset_index(drop=True)
    found: list[tuple[pd.DataFrame, list[int], Candidate]] = []
    cuts: list[DefinitionCut] = []
    segments: list[int] = []
    by_series = points.groupby(["kind", "key", "metric"], sort=False, observed=True)
    for (kind, _key, metric), series in by_series:
        column = METRIC_BY_NAME[str(metric)].column
        versions = series["schema_version"].tolist()
        segment = [0]
        for before, after, run in zip(versions, versions[1:], series["run"].iloc[1:], strict=False):
            where = None if before == after else changed_meaning(str(kind), column, before, after)
            segment.append(segment[-1] + (where is not None))
            if where is not None:
                cuts.append(DefinitionCut(str(metric), where, runs[int(run)], len(cuts)))
        segments.extend(segment)
        for _, part in series.assign(segment=segment).groupby("segment"):
            values, nights = part["value"].tolist(), part["run"].tolist()
            found += [(part, nights, c) for c in candidates(values)]
    points["segment"] = segments
    kept = significant([c for _, _, c in found], ALPHA, min_change)
    ids = {id(c): q for c, q in kept}
    change_points = [
        change_point(part, nights, c, ids[id(c)], runs) for part, nights, c in found if id(c) in ids
    ]
    change_points.sort(key=lambda cp: (-cp.position, -abs(cp.change)))
    return History(runs, points, change_points, cuts)


def change_point(
    part: pd.DataFrame, nights: list[int], found: Candidate, q_value: float, runs: list[RunInfo]
) -> ChangePoint:
    first = part.iloc[0]
    metric = METRIC_BY_NAME[str(first["metric"])]
    change = found.change
    position = int(nights[found.index])
    return ChangePoint(
        case=str(first["case"]),
        kind=str(first["kind"]),
        metric=metric.name,
        position=position,
        run=runs[position],
        before=median(found.before),
        after=median(found.after),
        change=change,
        regression=(change < 0) if metric.higher_is_better else (change > 0),
        p_value=found.p_value,
        q_value=q_value,
        nights_before=len(found.before),
        nights_after=len(found.after),
    )


def recent_regressions(history: History, last: int) -> list[ChangePoint]:
    """Regressing change points whose first changed run is one of the last `last` runs."""
    first_recent = len(history.runs) - last
    return [cp for cp in history.change_points if cp.regression and cp.position >= first_recent]


def run_history(args: HistoryArgs) -> tuple[int, str]:
    """(exit code, the terminal output); writes the files under args.out."""
    from distbench.reports.history_render import render_terminal, write_files

    paths, skipped = skip_incomplete(resolve_runs(args.run_dirs, args.glob))
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"--out {args.out} is a file: give a folder for the history files")
    history = build_history(paths, args.cache, args.min_change)
    files = write_files(history, Path(args.out))
    text = render_terminal(history, files)
    if skipped:
        text += f"\nhistory: skipped {len(skipped)} run{'s' * (len(skipped) > 1)} that did not "
        text += "complete: " + "; ".join(skipped)
    if args.fail_on_regression is not None:
        recent = recent_regressions(history, args.fail_on_regression)
        if recent:
            text += (
                f"\nhistory: FAIL: {len(recent)} regressing change point(s) within the last "
                f"{args.fail_on_regression} run(s)"
            )
            return EXIT_REGRESSION, text
        text += "\nhistory: pass: no regressing change point within the last "
        text += f"{args.fail_on_regression} run(s)"
    return 0, text
