"""`distbench history`: many nightly runs, each case a time series of its judged metric
(--metric; by default the fastest trial, as the nightly gate judges it), the change points where
its level stepped and stayed, and each case's verdict over the last nights in the four states of
distbench.stats.verdict.

    result = run_history(HistoryArgs(run_dirs=("results/nightly-1", ...), out="history"))

Runs are ordered by their manifest's start time. A series is cut where its column's meaning
changed between two schema versions (collectors/migrations.py): no change point is ever found
across such a cut, and the cut is listed as "definition changed in vN" instead. Writes
history.csv (every point), history.md, history.html (reports/history/render.py).
"""

from __future__ import annotations

import glob as globbing
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from distbench.collectors.migrations import changed_meaning
from distbench.parse import UsageError
from distbench.reports.history.detect import (
    ALPHA,
    MIN_CHANGE,
    Series,
    build_series,
    codes_of,
    judge_history,
)
from distbench.reports.history.lines import drift_line, mode_line
from distbench.reports.history.load import (
    DEFAULT_STAT,
    METRIC_BY_NAME,
    RunInfo,
    incomplete_reason,
    metric_names,
)
from distbench.reports.history.verdict import ChangePoint, Verdict, change_point, verdict
from distbench.stats.changepoint import MIN_SIZE
from distbench.stats.changepoint_null import NullPool, pool_for
from distbench.stats.verdict import CANNOT_TELL, REGRESSED

EXIT_REGRESSION = 1
RECENT = 7
"""The nights a case's verdict looks back over when --fail-on-regression N does not say."""


@dataclass(frozen=True)
class HistoryArgs:
    run_dirs: tuple[str, ...] = ()
    glob: str | None = None
    out: str = "history"
    fail_on_regression: int | None = None
    """Exit 1 when a case regressed within the last N runs (its verdicts look back N runs)."""
    min_change: float = MIN_CHANGE
    cache: str | None = None
    """A DuckDB file, 'off', or None for $XDG_CACHE_HOME/distbench/history.duckdb."""
    relative: bool = True
    """Judge each case beyond the rest of its run, the whole run a series of its own
    (detect.relative_series); False: every case on its own level."""
    metric: str = DEFAULT_STAT
    """The time statistic judged (load.STATS): min, p50, mean, max, p95 or p99."""


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
    """Every point: run (position), case, kind, key, metric, value, low, high, launches,
    spread, segment."""
    change_points: list[ChangePoint]
    cuts: list[DefinitionCut]
    verdicts: list[Verdict]
    """One per case, by case name."""
    recent: int
    """The runs the verdicts look back over."""
    drift: str = ""
    """How the series' drift was judged (drift_line)."""
    mode: str = ""
    """Relative or absolute, and what the whole run is (mode_line)."""
    wholes: tuple[Series, ...] = ()
    """Relative mode: the whole-run series (detect.relative_series), drawn first."""
    stat: str = DEFAULT_STAT
    """The time statistic judged (--metric; load.STATS)."""


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "distbench" / "history.duckdb"


def resolve_runs(run_dirs: tuple[str, ...], pattern: str | None) -> list[Path]:
    """The run directories named, then those the glob matches (sorted); each once."""
    if run_dirs and pattern:
        raise UsageError(
            "give run directories or --glob, not both (the shell expands an unquoted pattern "
            "into directories: quote it, e.g. --glob 'results/nightly-*')"
        )
    if pattern is not None:
        matched = sorted(p for p in globbing.glob(pattern) if os.path.isdir(p))
        if not matched:
            where = "" if os.path.isabs(pattern) else f" under {os.getcwd()}"
            raise UsageError(
                f"--glob '{pattern}' matches no directory{where}: run history where the nights "
                "are, or give their path, e.g. --glob '/srv/nightly/results/nightly-*'"
            )
        paths = [Path(p) for p in matched]
    else:
        paths = [Path(p) for p in run_dirs]
    for path in paths:  # a path that is not there first: it is what is wrong with one path
        if not path.is_dir():
            raise UsageError(f"{path} is not a run directory (it does not exist or is a file)")
    unique: dict[Path, Path] = {}
    for path in paths:
        unique.setdefault(path.resolve(), path)
    if len(unique) < 2:
        if len(paths) > 1:
            given = f"{paths[0]} was named {len(paths)} times, one run; "
        elif pattern is not None:
            given = f"--glob '{pattern}' matches one run directory, {paths[0]}; "
        else:
            given = f"{paths[0]} is one run; " if paths else ""
        raise UsageError(
            f"history needs at least two runs: {given}give RUN_DIR... (two nights or more) or "
            "--glob PATTERN"
        )
    return list(unique.values())


def skip_incomplete(
    paths: list[Path], unchanged: frozenset[Path] = frozenset()
) -> tuple[list[Path], list[str]]:
    """The runs that completed, and a note for each one skipped (load.incomplete_reason:
    a night ci/nightly.sh left partial, a run that did not complete). `unchanged`: runs the cache
    holds with the same manifests, which completed when they were cached: their manifests are
    not parsed again (730 of a year's launches cost ~2 s), their night's state still is."""
    kept, skipped = [], []
    for path in paths:
        reason = incomplete_reason(path, manifests=path not in unchanged)
        if reason is None:
            kept.append(path)
        else:
            skipped.append(f"{path} ({reason})")
    if len(kept) < 2:
        raise UsageError(
            f"history needs at least two runs that completed; of the {len(paths)} given, "
            f"{len(kept)} did: skipped {'; '.join(skipped)}"
        )
    return kept, skipped


def build_history(
    paths: list[Path], cache: str | None, min_change: float, recent: int = RECENT,
    relative: bool = True, stat: str = DEFAULT_STAT,
) -> tuple[History, list[str]]:  # fmt: skip
    """Skip the runs that did not complete, then read, order, cut and judge every series of the
    statistic `stat` (module docstring); the history and the notes of the runs skipped."""
    if cache == "off":
        from distbench.reports.history.cache import read_uncached

        kept, skipped = skip_incomplete(paths)
        infos, points = read_uncached(kept, metric_names(stat))
        history = judged_history(infos, points, min_change, recent, pool_for, relative, stat)
        return history, skipped
    from distbench.reports.history.cache import PointCache

    with PointCache.open(Path(cache) if cache else default_cache()) as store:
        kept, skipped = skip_incomplete(paths, store.unchanged(paths))
        infos, points = store.load(kept, metric_names(stat))
        history = judged_history(infos, points, min_change, recent, store.null_pool, relative, stat)
        return history, skipped


def judged_history(
    infos: list[RunInfo], points: pd.DataFrame, min_change: float, recent: int,
    pools: Callable[[int, bool], NullPool], relative: bool = True, stat: str = DEFAULT_STAT,
) -> History:  # fmt: skip
    """The judged history of one statistic's points, as the loaders chose them (read_uncached
    and PointCache.load with its metric_names: one series per case and kind); UsageError when
    no run recorded that statistic (p95 and p99: latency rows only)."""
    if not len(points):
        raise UsageError(
            f"history --metric {stat}: no run here recorded it (time_us_p95 and p99 are recorded "
            "by latency rows only, --mode latency or both): give min, p50, mean or max"
        )
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
    points["segment"], cuts = definition_segments(points, runs)
    series, judged = judge_history(
        build_series(points), len(runs), relative, ALPHA, min_change, pools
    )
    change_points = [
        change_point(s, j, f.index, runs) for s, j in zip(series, judged, strict=True)
        for f in j.found
    ]  # fmt: skip
    change_points.sort(key=lambda cp: (-cp.position, -abs(cp.change)))
    last = {s.case: (s, j) for s, j in zip(series, judged, strict=True)}  # its last segment
    verdicts = [
        verdict(s, j, runs, recent, min_change)
        for s, j in sorted(last.values(), key=lambda v: v[0].case)
    ]
    mode = mode_line(series, relative)
    wholes = tuple(s for s in series if s.whole_run)
    cases = [j for s, j in zip(series, judged, strict=True) if not s.whole_run]
    return History(
        runs, points, change_points, cuts, verdicts, recent, drift_line(cases), mode, wholes, stat
    )


def definition_segments(
    points: pd.DataFrame, runs: list[RunInfo]
) -> tuple[np.ndarray, list[DefinitionCut]]:
    """Each point's segment: the part of its series since its column last changed meaning."""
    segments = np.zeros(len(points), dtype=int)
    cuts: list[DefinitionCut] = []
    versions, run = points["schema_version"].to_numpy(), points["run"].to_numpy()
    key, metric = codes_of(points["key"])[0], codes_of(points["metric"])[0]
    same = np.r_[False, (key[1:] == key[:-1]) & (metric[1:] == metric[:-1])]
    for i in np.flatnonzero(same & np.r_[False, versions[1:] != versions[:-1]]):
        name, kind = str(points["metric"].iloc[i]), str(points["kind"].iloc[i])
        where = changed_meaning(kind, METRIC_BY_NAME[name].column, int(versions[i - 1]),
                                int(versions[i]))  # fmt: skip
        if where is not None:
            cuts.append(DefinitionCut(name, where, runs[int(run[i])], len(cuts)))
            segments[i] = 1
    starts = np.r_[True, ~same[1:]]
    total = np.cumsum(segments)
    return total - np.maximum.accumulate(np.where(starts, total, 0)), cuts


def recent_regressions(history: History) -> list[Verdict]:
    """The cases that regressed within the verdicts' last runs."""
    return [v for v in history.verdicts if v.state == REGRESSED]


OUT_FILES = ("history.html", "history.md", "history.csv")
"""What history writes in --out (render.write_files)."""


def check_out(out: Path) -> None:
    """UsageError unless history can write its files in `out`: a folder, or one it can make
    (its nearest existing parent a folder it may write in), whose files are not folders."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file: give a folder for the history files")
    parent = out
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise UsageError(
            f"--out {out}: {parent} is a file, not a folder: give a folder for the history "
            "files, e.g. --out history"
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(
            f"--out {out}: cannot write in {parent}: give a folder you can write to, e.g. "
            "--out history"
        )
    for name in OUT_FILES:
        if (out / name).is_dir():
            raise UsageError(
                f"--out {out}: {out / name} is a folder, where history writes its file {name}: "
                "move it, or give another --out"
            )


def out_error(out: str, error: OSError) -> str:
    """One line for a file of --out that could not be written."""
    where = error.filename or out
    return (
        f"--out {out}: cannot write {where}: {error.strerror or error}: give a folder you can "
        "write to, e.g. --out history"
    )


def run_history(args: HistoryArgs) -> tuple[int, str]:
    """(exit code, the terminal output); writes the files under args.out."""
    from distbench.reports.history.render import render_terminal, write_files

    paths = resolve_runs(args.run_dirs, args.glob)
    check_out(Path(args.out))
    recent = args.fail_on_regression or RECENT
    history, skipped = build_history(
        paths, args.cache, args.min_change, recent, args.relative, args.metric
    )
    try:
        files = write_files(history, Path(args.out))
    except OSError as error:  # what check_out cannot foresee: a full disk, a file made since
        raise UsageError(out_error(args.out, error)) from None
    text = render_terminal(history, files)
    if skipped:
        text += f"\nhistory: skipped {len(skipped)} run{'s' * (len(skipped) > 1)} that did not "
        text += "complete: " + "; ".join(skipped)
    if args.fail_on_regression is None:
        return 0, text
    regressed = recent_regressions(history)
    last = f"the last {args.fail_on_regression} run(s)"
    if regressed:
        text += f"\nhistory: FAIL: {len(regressed)} case(s) regressed within {last}"
        return EXIT_REGRESSION, text
    unseen = sum(v.state == CANNOT_TELL for v in history.verdicts)
    text += f"\nhistory: no case regressed within {last}"
    if unseen:
        text += f"; {unseen} case(s) cannot tell (too few nights, or not measured lately)"
    if args.fail_on_regression < MIN_SIZE:
        text += f"; a step needs {MIN_SIZE} nights on its new level to be seen"
    return 0, text
