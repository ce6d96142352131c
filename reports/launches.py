"""Several launches of one measurement, pooled into one run for compare (#16).

`ci/nightly.sh --launches N` sweeps N times a night into RUN/launch-1, RUN/launch-2, ... On a
shared box a row's level moves from launch to launch (process placement, the load of the moment)
far more than between the trials of one launch, so one launch a night compares two draws of that
spread. Pooling the launches of each side averages it: the replay (ci/bench_gate.py, docs: the
nightly gate) caught 25 % slowdowns of one primitive in more nights at the same A/A.

A pooled row's metric is the geometric mean of its launches' values (every metric column: a mean
of ratios, so no launch weighs more for being slower), and its independent samples are every
launch's trials, in launch order. Its other cells are the last launch's. A row missing from some
launches is pooled from the others. A run directory without launch-N subdirectories is one launch
and is read as before (reports/runs.py).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

from distbench.reports.checks import METRICS
from distbench.reports.runs import Row, Run, find_results, load_run

LAUNCH = re.compile(r"launch-(\d+)")
"""The name of one launch's folder inside a pooled run directory (ci/nightly.sh)."""

POOLED_COLUMNS = frozenset(
    {column for m in METRICS.values() for column in (m.comm_column, m.ddp_column) if column}
    | {"ci_low_us", "ci_high_us"}
)
"""The columns a pooled row averages (geometric mean over launches): every metric, and the p50's
interval bounds, so that compare's interval note speaks of the pooled p50, roughly."""


def launch_dirs(path: Path) -> list[Path]:
    """The launch-N folders of a run directory that hold results, in number order."""
    if not path.is_dir() or (path / "results.csv").exists():
        return []
    found = [
        (int(match.group(1)), child)
        for child in path.iterdir()
        if child.is_dir() and (match := LAUNCH.fullmatch(child.name)) and find_results(child)
    ]
    return [child for _number, child in sorted(found)]


def positive(values: list[float]) -> bool:
    return bool(values) and all(v > 0 and math.isfinite(v) for v in values)


def geometric_mean_or_last(values: list[float]) -> float:
    """The geometric mean of positive finite values; the last value when any is not one (the
    report's pooled frames, reports/launch_frames.py)."""
    if not positive(values):
        return values[-1] if values else math.nan
    return math.exp(math.fsum(math.log(v) for v in values) / len(values))


def geometric_mean(cells: list[str]) -> str:
    """The geometric mean of positive numbers as a cell; the last cell when any is not one."""
    try:
        values = [float(cell) for cell in cells]
    except ValueError:
        return cells[-1]
    return repr(geometric_mean_or_last(values)) if positive(values) else cells[-1]


def pool_rows(rows: list[Row], run: str) -> Row:
    """One row from the same row of several launches (module docstring)."""
    values = dict(rows[-1].values)
    for column in POOLED_COLUMNS & values.keys():
        values[column] = geometric_mean([row.values.get(column, "") for row in rows])
    units = tuple(t for row in rows for t in row.units_us)
    version = min(row.schema_version for row in rows)
    return replace(rows[-1], values=values, units_us=units, schema_version=version, run=run)


def pool_runs(path: Path, launches: list[Run]) -> Run:
    """One run of `launches` (in launch order): every row any of them holds, pooled."""
    pooled = Run(
        path=path,
        manifest=launches[-1].manifest,
        duplicates=sum(run.duplicates for run in launches),
        duplicate_runs=tuple(d for run in launches for d in run.duplicate_runs),
        schema_version=min(run.schema_version for run in launches),
    )
    keys = list(dict.fromkeys(key for run in launches for key in run.rows))
    for key in keys:
        rows = [run.rows[key] for run in launches if key in run.rows]
        pooled.rows[key] = pool_rows(rows, path.name)
    return pooled


def load_pooled(path: Path) -> tuple[Run, str | None]:
    """A run directory as compare reads it: its launch-N folders pooled when it has them (with a
    note saying so), else the run itself (reports/runs.py's load_run)."""
    dirs = launch_dirs(Path(path))
    if not dirs:
        return load_run(path), None
    pooled = pool_runs(Path(path), [load_run(d) for d in dirs])
    names = ", ".join(d.name for d in dirs)
    note = (
        f"{path}: {len(dirs)} launches pooled ({names}): each row's metric is the geometric mean "
        "of the launches', its samples every launch's trials"
    )
    return pooled, note
