"""A night's launch-N folders drawn as one run in `distbench report`'s figures and tables: a
night's level per case. The comparison's verdicts and intervals do not use this: they take the
launches apart, as compare does (reports/report/verdicts.py, distbench.stats).

`ci/nightly.sh --launches 2` sweeps into NIGHT/launch-1 and NIGHT/launch-2. The report draws them
as one run named NIGHT: each case's metric columns are the geometric mean of its launches'
values (POOLED_COLUMNS; a plotting level, labelled so in a note), its other cells the last
launch's, and its samples every launch's (the figures' sample bands), the trials of later launches
numbered after the earlier ones'. A case missing from some launches is drawn from the others. Runs
outside launch-N folders are left as they are, and so are launches given as arguments of their
own (`report NIGHT/launch-1 NIGHT/launch-2` compares the two).

    loaded = load_runs(paths)
    pool_launches(loaded)
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pandas as pd

from distbench.reports.compare.checks import METRICS
from distbench.reports.compare.sides import LAUNCH
from distbench.reports.kinds import MATCH_KEYS
from distbench.reports.load import Loaded, RunData, run_frames, unique_names

LAUNCH_COLUMN = "_launch"
POOLED_COLUMNS = frozenset(
    {column for m in METRICS.values() for column in (m.comm_column, m.ddp_column) if column}
    | {"ci_low_us", "ci_high_us"}
)
"""The columns drawn as the geometric mean over a night's launches: every metric, and the p50's
interval bounds."""


def geometric_mean_or_last(values: list[float]) -> float:
    """The geometric mean of positive finite values; the last value when any is not one."""
    if not values or not all(v > 0 and math.isfinite(v) for v in values):
        return values[-1] if values else math.nan
    return math.exp(math.fsum(math.log(v) for v in values) / len(values))


def night_of(run_dir: Path) -> tuple[Path, int] | None:
    """(NIGHT, N) when `run_dir` is NIGHT/launch-N or lies below it; None otherwise."""
    for folder in (run_dir, *run_dir.parents):
        if match := LAUNCH.fullmatch(folder.name):
            return folder.parent, int(match.group(1))
    return None


def pool_launches(loaded: Loaded) -> None:
    """Replace the runs of each night's launches in `loaded` by one pooled run per row kind
    (module docstring); a note names each night pooled."""
    nights: dict[tuple[int, Path, str], list[tuple[int, RunData]]] = {}
    kept: list[RunData] = []
    for run in loaded.runs:
        found = night_of(Path(run.path))
        if found is None or not len(run.rows):
            kept.append(run)
            continue
        nights.setdefault((run.argument, found[0], run.kind), []).append((found[1], run))
    pooled: list[RunData] = []
    for (_argument, night, _kind), members in nights.items():
        launches = sorted({number for number, _run in members})
        if len(launches) < 2:
            kept += [run for _number, run in members]
            continue
        pooled.append(pool_night(night, sorted(members, key=lambda m: m[0])))
        names = ", ".join(f"launch-{n}" for n in launches)
        note = (
            f"{night}: {len(launches)} launches drawn as one run ({names}): in the figures and "
            "tables each case's metrics are the geometric mean of its launches', its samples "
            "every launch's; the comparison's verdicts take the launches apart"
        )
        if note not in loaded.notes:
            loaded.notes.append(note)
    if not pooled:
        return
    loaded.runs = kept + pooled
    unique_names(loaded.runs)
    for name, frame in run_frames(loaded.runs).items():
        setattr(loaded, name, frame)


def pool_night(night: Path, members: list[tuple[int, RunData]]) -> RunData:
    """One run of one kind from the launches' runs (in launch order)."""
    last = members[-1][1]
    key = list(MATCH_KEYS[last.kind])
    rows = pd.concat(
        [run.rows.assign(**{LAUNCH_COLUMN: i}) for i, (_n, run) in enumerate(members)],
        ignore_index=True,
    )
    case = rows[key].astype(str).agg("\x1f".join, axis=1)
    rows = rows.assign(_case=case)
    pooled = rows.drop_duplicates("_case", keep="last").set_index("_case")
    for column in sorted(POOLED_COLUMNS & set(rows.columns)):
        pooled[column] = rows.groupby("_case")[column].agg(
            lambda values: geometric_mean_or_last(values.astype(float).tolist())
        )
    samples = pool_samples(members, rows, pooled["measurement"])
    pooled = pooled.reset_index(drop=True).drop(columns=[LAUNCH_COLUMN])
    name = night.name
    pooled["run_id"] = name
    return replace(
        last,
        path=night,
        name=name,
        rows=pooled,
        samples=samples,
        schema_version=min(run.schema_version for _n, run in members),
        launch_manifests=tuple(run.manifest or {} for _n, run in members),
        launch_numbers=tuple(n for n, _run in members),
    )


def pool_samples(
    members: list[tuple[int, RunData]], rows: pd.DataFrame, measurement_of: pd.Series
) -> pd.DataFrame | None:
    """Every launch's samples of each pooled case under the pooled row's measurement id, the
    trials of each launch numbered after the previous launches' of the same case."""
    frames = []
    offset: dict[str, float] = {}
    for i, (_n, run) in enumerate(members):
        if run.samples is None:
            continue
        mine = rows[rows[LAUNCH_COLUMN] == i]
        target = dict(zip(mine["measurement"], mine["_case"].map(measurement_of), strict=True))
        samples = run.samples[run.samples["measurement"].isin(target)].copy()
        samples["measurement"] = samples["measurement"].map(target)
        shift = samples["measurement"].map(lambda m: offset.get(m, 0.0))
        samples["trial"] = samples["trial"] + shift
        for measurement, trials in samples.groupby("measurement")["trial"].max().items():
            offset[str(measurement)] = float(trials) + 1
        frames.append(samples)
    return pd.concat(frames, ignore_index=True) if frames else None
