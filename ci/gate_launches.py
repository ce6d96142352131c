"""The launches ci/bench_gate.py replays nights from: loaded from run directories or a JSON export,
modelled from a noise model, exported, and drawn into one night's run (pooled as compare pools a
run's launch-N folders). Its own module so that bench_gate.py stays one page of decision rules."""

from __future__ import annotations

import json
import math
import random
import statistics
from collections.abc import Callable
from pathlib import Path

from distbench.reports.launches import pool_runs
from distbench.reports.runs import Row, Run, load_run

Key = tuple[tuple[str, str], ...]
Launch = dict[Key, tuple[float, ...]]
STATISTICS: dict[str, Callable[[list[float]], float]] = {
    "time_us_p50": statistics.median,
    "time_us_min": min,
    "time_us_mean": statistics.fmean,
}
"""The metrics a night can be gated on, from its drawn trial samples."""


ORDERS: dict[str, str] = {}
"""Launch name -> its trial order (load_launches fills it; an export without one: sequential)."""


def load_launches(path: Path) -> dict[str, Launch]:
    """Launch name -> row key -> trial samples, from run directories below `path` or from a JSON
    export of them. Only rows every launch holds are kept."""
    if path.is_file():
        data = json.loads(path.read_text())
        keys = [tuple((k, str(v)) for k, v in case.items()) for case in data["cases"]]
        launches = {
            name: {key: tuple(times) for key, times in zip(keys, rows, strict=True) if times}
            for name, rows in data["launches"].items()
        }
        ORDERS.update(dict.fromkeys(launches, data.get("trial_order", "sequential")))
    else:
        launches = {}
        for run_dir in sorted(p for p in path.iterdir() if p.is_dir()):
            run = load_run(run_dir)
            launches[run_dir.name] = {k: r.units_us for k, r in run.rows.items() if r.units_us}
            orders = {r.values.get("trial_order") or "sequential" for r in run.rows.values()}
            ORDERS[run_dir.name] = orders.pop() if len(orders) == 1 else "mixed"
    common = set.intersection(*(set(launch) for launch in launches.values()))
    return {
        name: {k: v for k, v in launch.items() if k in common} for name, launch in launches.items()
    }


def model_launches(
    like: dict[str, Launch], spread: float, jitter: float, count: int, seed: int
) -> dict[str, Launch]:
    """Launches from a noise model instead of a box: the rows and trial counts of `like`, each
    row's level moved per launch by a lognormal factor of sd `spread` (night-to-night) and each
    trial by one of sd `jitter` (within a launch). For a node this script cannot run on."""
    rng = random.Random(seed)
    template = next(iter(like.values()))
    levels = {key: statistics.median(times) for key, times in template.items()}
    launches = {}
    for i in range(count):
        launch = {}
        for key, level in levels.items():
            shifted = level * math.exp(rng.gauss(0.0, spread))
            trials = len(template[key])
            launch[key] = tuple(shifted * math.exp(rng.gauss(0.0, jitter)) for _ in range(trials))
        launches[f"M{i:02d}"] = launch
        ORDERS[f"M{i:02d}"] = "interleaved"  # the model's rows move independently by design
    return launches


def export(launches: dict[str, Launch], path: Path) -> None:
    keys = sorted({key for launch in launches.values() for key in launch})
    body = {
        "about": "per-trial time_us of each row of independent launches (ci/bench_gate.py)",
        "trial_order": orders.pop()
        if len(orders := {ORDERS.get(n) for n in launches}) == 1
        else None,
        "cases": [dict(key) for key in keys],
        "launches": {
            name: [[round(t, 1) for t in launch.get(key, ())] for key in keys]
            for name, launch in launches.items()
        },
    }
    path.write_text(json.dumps(body, separators=(",", ":")) + "\n")


def night(
    launch: Launch, name: str, trials: int, rng: random.Random, slow: str | None, factor: float
) -> Run:
    """One night's run drawn from a launch; `slow`: that primitive's samples x factor."""
    run = Run(path=Path(name), manifest={})
    for key, times in launch.items():
        drawn = [t + rng.uniform(-0.05, 0.05) for t in rng.sample(times, min(trials, len(times)))]
        values = dict(key)
        values["trial_order"] = ORDERS.get(name, "sequential")
        if values["primitive"] == slow:
            drawn = [t * factor for t in drawn]
        for column, statistic in STATISTICS.items():
            values[column] = values[f"step_{column}"] = str(statistic(drawn))
        kind = values["kind"]
        unit = "window" if kind == "ddp" else "trial"
        run.rows[key] = Row(key, kind, values, tuple(drawn), unit, run=name)
    return run


def pooled_night(
    launches: dict[str, Launch], names: tuple[str, ...], trials: int, rng: random.Random,
    slow: str | None, factor: float,
) -> Run:  # fmt: skip
    """One side of a night from several launches, pooled as compare pools launch-N folders."""
    runs = [night(launches[name], name, trials, rng, slow, factor) for name in names]
    return runs[0] if len(runs) == 1 else pool_runs(Path("+".join(names)), runs)
