"""Which rows a run plans, and what a launch has left: the numbers every count of a run compares
with its plan (the progress total, a failed launch's "every measurement had finished", the kept
rows after an interruption, a resume's launches to skip).

A run's planned rows are `[tag]ws<N>/i<k>` with k below its workload's plan_size at world size N.
Rows numbered past the plan are extras a workload adds as it goes (pairs: an outlier's
confirmation, pairs/spec.py confirmation_index): they are never counted against the plan. And a
launch whose planned rows are all there may still have work left that no row marks (pairs: a
size whose standings ranks.csv lacks, its confirmation cut short): Workload.unfinished says how
much, so that a resume runs that launch again instead of taking it for finished."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from pathlib import Path

from distbench.collectors.sink import finished_measurements
from distbench.plan import measured_sizes, plan_launches
from distbench.spec import RunSpec, measurement_index
from distbench.workloads import WORKLOADS


def planned_id(measurement: str, tag: str, world_size: int, plan: int) -> bool:
    """Whether `measurement` is one of the `plan` measurements of world size `world_size`:
    `[tag]ws<N>/i<k>` with k below the plan (an id of another form counts as planned)."""
    if not measurement.startswith(f"{tag}ws{world_size}/"):
        return False
    index = measurement_index(measurement, world_size, tag)
    return index is None or index < plan


def launch_plans(spec: RunSpec, world_size: int) -> dict[int, int]:
    """Planned rows per world size that one launch measures (subgroups: several)."""
    counter = WORKLOADS[spec.kind].plan_size
    return {
        k: counter(spec.workload, k) for k in measured_sizes(spec.launch, spec.kind, world_size)
    }


def planned_left(spec: RunSpec, world_size: int, done: Collection[str]) -> int:
    """The planned rows of one launch not in `done`."""
    plans = launch_plans(spec, world_size)
    tag = str(getattr(spec.workload, "tag", ""))
    kept = sum(1 for m in done if any(planned_id(m, tag, k, n) for k, n in plans.items()))
    return max(0, sum(plans.values()) - kept)


def unfinished(spec: RunSpec, world_size: int, done: Collection[str]) -> int:
    """The work of one launch that no missing planned row marks (Workload.unfinished)."""
    finish = WORKLOADS[spec.kind].unfinished
    return sum(finish(spec, k, done) for k in launch_plans(spec, world_size))


def launch_left(spec: RunSpec, world_size: int, done: Collection[str]) -> int:
    """What one launch has left: its planned rows not in `done`, and the work its workload says
    no row marks (Workload.unfinished)."""
    return planned_left(spec, world_size, done) + unfinished(spec, world_size, done)


def run_left(specs: Iterable[RunSpec], done: Collection[str]) -> int:
    """What a whole run has left (every launch of every part: a sweep's backends)."""
    return sum(
        launch_left(part, launch.world_size, done)
        for part in specs
        for launch in plan_launches(part.launch, part.kind)
    )


def kept_and_left(
    parts: Iterable[RunSpec], planned: Callable[[str], bool], run_dir: Path
) -> tuple[int, int]:
    """After a run stopped: its planned measurements with a row in results.csv (`planned`:
    planned_of), and what it has left (run_left)."""
    finished = finished_measurements(run_dir)
    return sum(map(planned, finished)), run_left(parts, finished)


def planned_of(specs: Iterable[RunSpec]) -> Callable[[str], bool]:
    """Whether a measurement id is one a run of `specs` (a sweep's backends: several) planned,
    rather than an extra row past a plan."""
    plans: dict[tuple[str, int], int] = {}
    for part in specs:
        tag = str(getattr(part.workload, "tag", ""))
        for launch in plan_launches(part.launch, part.kind):
            for world_size in launch.measured:
                plans[(tag, world_size)] = WORKLOADS[part.kind].plan_size(part.workload, world_size)

    def planned(measurement: str) -> bool:
        for (tag, world_size), plan in plans.items():
            if measurement.startswith(f"{tag}ws{world_size}/"):
                return planned_id(measurement, tag, world_size, plan)
        return True  # another launch's or form's: not a row past one of these plans

    return planned
