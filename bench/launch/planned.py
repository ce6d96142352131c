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

import re
from collections.abc import Callable, Collection, Iterable

from distbench.plan import measured_sizes, plan_launches
from distbench.spec import RunSpec
from distbench.workloads import WORKLOADS

ID = re.compile(r"^(.*)ws(\d+)/i(\d+)$")


def planned_id(measurement: str, tag: str, world_size: int, plan: int) -> bool:
    """Whether `measurement` is one of the `plan` measurements of world size `world_size`:
    `[tag]ws<N>/i<k>` with k below the plan (an id of another form counts as planned)."""
    head = f"{tag}ws{world_size}/"
    if not measurement.startswith(head):
        return False
    index = measurement[len(head) :]
    return not (index[:1] == "i" and index[1:].isdigit() and int(index[1:]) >= plan)


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
        found = ID.match(measurement)
        if found is None:
            return True
        plan = plans.get((found.group(1), int(found.group(2))))
        return plan is None or int(found.group(3)) < plan

    return planned
