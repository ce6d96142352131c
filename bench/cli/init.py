"""`distbench init`: build the InitSpec and run it like every measuring command (cli/run.py)."""

from __future__ import annotations

import typer

from distbench.cli.run import run_workload
from distbench.init.args import InitArgs, build_init_spec
from distbench.init.spec import InitSpec
from distbench.options.launch import LaunchArgs, ResolvedLaunch
from distbench.options.opt import with_groups


@with_groups(init=InitArgs, launch=LaunchArgs)
def init(init: InitArgs, launch: LaunchArgs) -> None:
    """Time a fresh process group's start-up per init method: init_process_group, the first
    collective, --new-groups K subgroups, destroy_process_group (slowest rank, --trials times).
    An init run is not resumed (--resume refuses it: a run takes about a minute; run it again).

    \b
    Examples:
      distbench init --backend gloo --world-sizes 2,4,8 --trials 3
    """

    def build(resolved: ResolvedLaunch) -> InitSpec:
        return build_init_spec(init, resolved)

    raise typer.Exit(run_workload(launch, "init", build, resumed_by="init"))
