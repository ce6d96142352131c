"""The recorded launches ci/bench_stats.py judges nights from: loading run directories, the compact
fixture they are exported to, nights, and the matrices the statistical core reads.

A fixture (tests/data/launches-nightly-cpu.json.gz) holds, per launch of the shipped nightly
matrix (ci/sweep-nightly-cpu.toml): its group (a recording session: launches of one group ran
back to back, groups hours or days apart), its start time, and every row's per-trial times (us,
rounded to 0.1); from g7 on also its end, the load as it started and the hypervisor's share of
the CPU while it ran (from its manifest). A night is two consecutive launches of one group, as
ci/nightly.sh runs them.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from distbench.stats.components import within_variances
from distbench.stats.engine import SideMatrix

Key = tuple[tuple[str, str], ...]
STATISTICS: dict[str, Callable[..., np.ndarray]] = {
    "time_us_min": np.min,
    "time_us_p50": np.median,
    "time_us_mean": np.mean,
}


@dataclass(frozen=True)
class Launch:
    name: str
    group: str
    started: str
    trials: tuple[np.ndarray, ...]
    """Per row (in Recorded.keys order): its trial times (us)."""
    ended: str = ""
    steal: float | None = None
    """The share of CPU time the hypervisor took while it ran (manifest cpu_steal_share)."""
    load: float | None = None
    """The 1-minute load average as it started (manifest load_avg_start[0])."""

    def machine(self) -> dict[str, object]:
        """What the fixture keeps of the machine beside the trials (only what was recorded)."""
        facts = {"ended": self.ended, "steal": self.steal, "load": self.load}
        return {k: v for k, v in facts.items() if v not in ("", None)}


@dataclass
class Recorded:
    keys: list[dict[str, str]]
    launches: list[Launch]

    def group(self, name: str) -> list[Launch]:
        return [launch for launch in self.launches if launch.group == name]

    @property
    def groups(self) -> list[str]:
        return list(dict.fromkeys(launch.group for launch in self.launches))


def load_runs(root: Path, group: str) -> list[tuple[Launch, dict[Key, tuple[float, ...]]]]:
    """(the launch without its trials, key -> trial times) of every run directory below `root`,
    by name."""
    from distbench.reports.compare.machine import first_load, steal
    from distbench.reports.runs import load_run

    found = []
    for run_dir in sorted(p for p in root.iterdir() if (p / "results.csv").exists()):
        run = load_run(run_dir)
        rows = {key: row.units_us for key, row in run.rows.items() if row.units_us}
        manifest = run.manifest
        launch = Launch(
            f"{group}/{run_dir.name}", group, str(manifest.get("started_utc", "")), (),
            str(manifest.get("ended_utc") or ""), steal(manifest), first_load(manifest),
        )  # fmt: skip
        found.append((launch, rows))
    return found


def record(groups: Sequence[tuple[str, Path]]) -> Recorded:
    """The launches of each (group, root): only rows that every launch holds are kept."""
    loaded = [found for g, root in groups for found in load_runs(root, g)]
    keys = sorted(set.intersection(*(set(rows) for _launch, rows in loaded)))
    launches = [
        replace(launch, trials=tuple(np.asarray(rows[k], float) for k in keys))
        for launch, rows in loaded
    ]
    return Recorded([dict(k) for k in keys], launches)


def export(recorded: Recorded, path: Path) -> None:
    body = {
        "about": "per-trial time_us of every row of recorded launches of the nightly matrix "
        "(ci/bench_stats.py --export)",
        "cases": recorded.keys,
        "launches": [
            {
                "name": launch.name,
                "group": launch.group,
                "started": launch.started,
                "trials": [[round(float(t), 1) for t in trials] for trials in launch.trials],
                **launch.machine(),
            }
            for launch in recorded.launches
        ],
    }
    with gzip.open(path, "wt") as out:
        json.dump(body, out, separators=(",", ":"))


def load_fixture(path: Path) -> Recorded:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as source:  # type: ignore[operator]
        body = json.load(source)
    launches = [
        Launch(
            d["name"],
            d["group"],
            d.get("started", ""),
            tuple(np.asarray(t, float) for t in d["trials"]),
            d.get("ended", ""),
            d.get("steal"),
            d.get("load"),
        )
        for d in body["launches"]
    ]
    return Recorded([{k: str(v) for k, v in case.items()} for case in body["cases"]], launches)


def load_legacy(path: Path, group: str) -> Recorded:
    """A 0.2.0 export (ci/bench_gate.py --export: cases, launches name -> per-row trials)."""
    body = json.loads(path.read_text())
    launches = [
        Launch(f"{group}/{name}", group, "", tuple(np.asarray(t, float) for t in rows))
        for name, rows in sorted(body["launches"].items())
    ]
    return Recorded([{k: str(v) for k, v in case.items()} for case in body["cases"]], launches)


def merge(parts: Sequence[Recorded]) -> Recorded:
    """Launches of several recordings, on the rows they all hold, keyed by the key columns they
    all have (a recording of an older schema has fewer)."""
    columns = set.intersection(*(set(k) for part in parts for k in part.keys))

    def project(key: dict[str, str]) -> tuple[tuple[str, str], ...]:
        return tuple(sorted((c, v) for c, v in key.items() if c in columns))

    order = [project(k) for k in parts[0].keys]
    common = set(order).intersection(*({project(k) for k in p.keys} for p in parts[1:]))
    order = [k for k in order if k in common]
    launches = []
    for part in parts:
        index = {project(k): i for i, k in enumerate(part.keys)}
        launches += [
            replace(one, trials=tuple(one.trials[index[k]] for k in order)) for one in part.launches
        ]
    return Recorded([dict(k) for k in order], launches)


@dataclass
class Values:
    """Every launch's value of every row, in log terms, and its within-launch variance."""

    y: np.ndarray
    """launches x rows: log of the statistic of the row's trials."""
    within: np.ndarray
    names: list[str]
    groups: list[str]


def launch_values(recorded: Recorded, metric: str) -> Values:
    statistic = STATISTICS[metric]
    launches = recorded.launches
    y = np.array([[math.log(float(statistic(t))) for t in one.trials] for one in launches])
    within = np.array(
        [within_variances(one.trials, statistic, seed=i) for i, one in enumerate(launches)]
    )
    return Values(y, within, [one.name for one in launches], [one.group for one in launches])


def nights_of(values: Values, group: str, per_night: int = 2) -> list[list[int]]:
    """A group's nights: runs of `per_night` consecutive launches (a short last run left out)."""
    members = [i for i, g in enumerate(values.groups) if g == group]
    return [members[i : i + per_night] for i in range(0, len(members) - per_night + 1, per_night)]


def side(
    values: Values, nights: Sequence[Sequence[int]], y: np.ndarray | None = None
) -> SideMatrix:
    """The matrix of these nights' launches (`y`: replacement values for them, in order)."""
    rows = [i for night in nights for i in night]
    names = [values.names[i] for i in rows]
    night_names = [
        f"night{n}:{values.names[night[0]]}" for n, night in enumerate(nights) for _i in night
    ]
    return SideMatrix(names, night_names, values.y[rows] if y is None else y, values.within[rows])


def excess_variances(
    values: Values, columns: Sequence[int], groups: Sequence[str]
) -> tuple[np.ndarray, list[int]]:
    """Each (row, group)'s launch-to-launch variance of y beyond its launches' mean within part,
    from the launches of one recording group (drift between groups is not counted), and its
    degrees of freedom (the group's launches - 1). Groups of fewer than 3 launches are skipped."""
    found, dfs = [], []
    for group in groups:
        members = [i for i, g in enumerate(values.groups) if g == group]
        if len(members) < 3:
            continue
        total = values.y[np.ix_(members, list(columns))].var(axis=0, ddof=1)
        within = np.nanmean(values.within[np.ix_(members, list(columns))], axis=0)
        found.append(total - within)
        dfs += [len(members) - 1] * len(total)
    return (np.concatenate(found) if found else np.array([])), dfs
