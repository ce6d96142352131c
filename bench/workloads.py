"""The one registry of workload kinds. Each kind names its spec dataclass (what spec.json holds),
how many rows one launch writes, its terminal table, its rank-side runner and whether it measures
on subgroups. The CLI process reads all of it without torch: the runner is a dotted path that only
the worker imports. A new workload is one folder plus one line in WORKLOADS (`own_command` for
the usual one: a command of its own, named as its kind).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from distbench.comm.spec import CommSpec, comm_plan_size
from distbench.ddp import spec as ddp_spec
from distbench.init import spec as init_spec
from distbench.overlap import spec as overlap_spec
from distbench.pairs import spec as pairs_spec
from distbench.pipeline import spec as pipeline_spec
from distbench.rpc import spec as rpc_spec
from distbench.spec import LaunchSpec, RunSpec, as_tuples

if TYPE_CHECKING:
    from distbench.primitives.base import Context

Runner = Callable[["RunSpec", "Context", Callable[[str], None]], None]
"""What a workload runs on every rank: (spec, the group as this rank sees it, log)."""
Render = Callable[[Sequence[dict[str, str]]], str]
"""A workload's terminal table of its results.csv rows."""


def table(path: str) -> Render:
    """The table `module:function`, imported when first drawn: only the CLI draws tables, and
    every rank imports this registry (the tables import rich; docs/performance.md, "Start-up")."""

    def render(rows: Sequence[dict[str, str]]) -> str:
        module, function = path.split(":")
        draw: Render = getattr(importlib.import_module(module), function)
        return draw(rows)

    return render


Unfinished = Callable[[RunSpec, int, Collection[str]], int]


@dataclass(frozen=True)
class Workload:
    """One workload kind, as every part of distbench needs to know it."""

    kind: str
    """The `kind` of spec.json and of the spec dataclass."""
    spec_type: type
    """The frozen dataclass of spec.json's `workload`."""
    plan_size: Callable[[Any, int], int]
    """Rows one launch of world size n writes (the CLI's progress total); torch-free."""
    render: Render
    """The terminal table of its results.csv rows."""
    runner: str
    """`module:function` that runs it on every rank; imported by the worker only (torch)."""
    subgroups: bool
    """Whether the runner measures on ctx.group, so one launch serves several world sizes."""
    resumed_by: Callable[[Any], tuple[str, ...]]
    """The commands that may --resume a run of it (a run is resumed by the command that
    started it)."""
    past_plan: bool = False
    """Whether rows numbered past the plan may follow the planned ones (pairs: an outlier's
    confirmation): the progress display then keeps a launch's table open until it ends."""
    unfinished: Unfinished = lambda spec, world_size, done: 0
    """Work a launch of world size n of the run `spec` has left that no missing planned row
    marks, given the measurement ids `done` (pairs: a size whose standings ranks.csv lacks:
    launch/planned.py); torch-free."""

    def load_runner(self) -> Runner:
        module, function = self.runner.split(":")
        runner: Runner = getattr(importlib.import_module(module), function)
        return runner


def own_command(
    kind: str, spec_type: type, plan_size: Callable[[Any, int], int],
    unfinished: Unfinished | None = None,
) -> Workload:  # fmt: skip
    """A workload of one command named as its kind (`distbench ddp` runs and resumes kind ddp),
    its table `distbench.<kind>.table:render_<kind>_table`, its runner
    `distbench.<kind>.runner:run_<kind>`, on the launch's world group; `unfinished`: a
    workload that writes rows past its plan and may leave work no row marks (pairs)."""
    render = table(f"distbench.{kind}.table:render_{kind}_table")
    runner = f"distbench.{kind}.runner:run_{kind}"
    own = Workload(kind, spec_type, plan_size, render, runner, False, lambda workload: (kind,))
    return own if unfinished is None else replace(own, unfinished=unfinished, past_plan=True)


WORKLOADS: dict[str, Workload] = {
    workload.kind: workload
    for workload in (
        Workload(
            kind="comm",
            spec_type=CommSpec,
            plan_size=comm_plan_size,
            render=table("distbench.comm.table:render_table"),
            runner="distbench.comm.runner:run_comm",
            subgroups=True,
            resumed_by=lambda workload: tuple(workload.primitives),
        ),
        own_command("ddp", ddp_spec.DdpSpec, ddp_spec.plan_size),
        own_command(
            "pairs", pairs_spec.PairsSpec, pairs_spec.plan_size, unfinished=pairs_spec.unranked
        ),
        own_command("init", init_spec.InitSpec, init_spec.plan_size),
        own_command("rpc", rpc_spec.RpcSpec, rpc_spec.plan_size),
        own_command("pipeline", pipeline_spec.PipelineSpec, pipeline_spec.plan_size),
        own_command("overlap", overlap_spec.OverlapSpec, overlap_spec.plan_size),
    )
}
"""Workload kind -> everything about it; the only list of kinds."""


def load_spec(path: Path) -> RunSpec:
    """A run's spec.json, its workload read as the dataclass its kind's registry entry names."""
    body = json.loads(Path(path).read_text())
    workload_type = WORKLOADS[body["kind"]].spec_type
    launch = LaunchSpec(**as_tuples(body["launch"]))
    return RunSpec(launch=launch, workload=workload_type(**as_tuples(body["workload"])))
