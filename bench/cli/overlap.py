"""`distbench overlap`: build the OverlapSpec and run it like every measuring command
(cli/run.py)."""

from __future__ import annotations

import typer

from distbench.cli.run import run_workload
from distbench.options.launch import LaunchArgs, ResolvedLaunch
from distbench.options.opt import with_groups
from distbench.overlap.args import OverlapArgs, build_overlap_spec
from distbench.overlap.spec import OverlapSpec


@with_groups(overlap=OverlapArgs, launch=LaunchArgs)
def overlap(overlap: OverlapArgs, launch: LaunchArgs) -> None:
    """Time a collective while a matmul computes: the compute alone, the collective alone, and
    both (issued async_op=True, compute, wait); overlap efficiency and each one's slowdown.

    \b
    Examples:
      distbench overlap --backend gloo --sizes 4M --compute 512 --compute-threads 1,2 --check
      distbench overlap --backend nccl --sizes 64M,256M --compute 8192 --mode both
    """

    def build(resolved: ResolvedLaunch) -> OverlapSpec:
        return build_overlap_spec(overlap, resolved)

    raise typer.Exit(run_workload(launch, "overlap", build, resumed_by="overlap"))
