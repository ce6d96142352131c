"""Which launches a run makes and which world sizes each one measures; pure logic, no torch.

Single node, default: one launch of the largest world size, the smaller ones measured on
`new_group` subgroups of ranks 0..k-1 (workload kinds whose registry entry says `subgroups` only;
the others get one launch per world size). `--separate-launches` restores one launch per world
size. Several nodes: one launch of nnodes x nproc-per-node ranks, smaller world sizes on
subgroups (other kinds measure the whole world only).

Measurement ids (spec.py measurement_id) are `ws<N>/i<k>` (N the measured world size, k its
index in the deterministic sweep), so a resumed run can skip exactly the measurements whose rows
exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from distbench.spec import LaunchSpec
from distbench.workloads import WORKLOADS


@dataclass(frozen=True)
class PlannedLaunch:
    """One torchrun launch: its processes, and the world sizes measured in it (ascending)."""

    world_size: int
    measured: tuple[int, ...]


def uses_subgroups(launch: LaunchSpec, kind: str) -> bool:
    """Whether smaller world sizes are measured on subgroups of one launch."""
    subgroups = WORKLOADS[kind].subgroups
    if launch.nnodes > 1:
        return subgroups
    return not launch.separate_launches and subgroups


def launch_world_size(launch: LaunchSpec) -> int:
    """Processes in a multi-node launch (nnodes x nproc-per-node)."""
    return launch.nnodes * launch.nproc_per_node


def plan_launches(launch: LaunchSpec, kind: str) -> list[PlannedLaunch]:
    """The launches of a run, in order."""
    sizes = tuple(sorted(launch.world_sizes))
    if launch.nnodes > 1:
        total = launch_world_size(launch)
        # several nodes join one launch; kinds that cannot use subgroups measure the whole world
        return [PlannedLaunch(total, sizes if uses_subgroups(launch, kind) else (total,))]
    if uses_subgroups(launch, kind):
        return [PlannedLaunch(max(sizes), sizes)]
    return [PlannedLaunch(size, (size,)) for size in sizes]


def measured_sizes(launch: LaunchSpec, kind: str, world_size: int) -> tuple[int, ...]:
    """The world sizes a launch of `world_size` processes measures (what the worker loops over)."""
    for planned in plan_launches(launch, kind):
        if planned.world_size == world_size:
            return planned.measured
    return (world_size,)
