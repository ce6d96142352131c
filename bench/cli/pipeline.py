"""`distbench pipeline`: the PipelineSpec built from its options (pipeline/args.py), run like
every measuring command (cli/run.py)."""

from __future__ import annotations

import typer

from distbench.cli.run import run_workload
from distbench.options.launch import LaunchArgs, ResolvedLaunch
from distbench.options.opt import with_groups
from distbench.pipeline.args import PipelineArgs, build_pipeline_spec
from distbench.pipeline.spec import PipelineSpec


@with_groups(pipeline=PipelineArgs, launch=LaunchArgs)
def pipeline(pipeline: PipelineArgs, launch: LaunchArgs) -> None:
    """Model parallelism: the model split into one stage per rank, library versus by hand.

    \b
    Examples:
      distbench pipeline --backend gloo --world-sizes 2,3 --microbatches 1,4
      distbench pipeline --model transformer --depth 4 --world-sizes 4 --microbatches 4,8
    """

    def build(resolved: ResolvedLaunch) -> PipelineSpec:
        return build_pipeline_spec(pipeline, resolved)

    raise typer.Exit(run_workload(launch, "pipeline", build, resumed_by="pipeline"))
