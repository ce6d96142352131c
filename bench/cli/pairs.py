"""`distbench pairs`: build the PairsSpec, run it like every measuring command (cli/run.py), then
print every rank's standing from ranks.csv, name the outliers and, with --fail-on-outlier, exit 1
when there is one. --dry-run prints the plan and launches nothing, as every command does."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from distbench.cli.run import build_specs, run_specs, run_workload
from distbench.collectors.schema import RANKS_CSV
from distbench.collectors.sink import read_rows
from distbench.launch.resume import resume_run
from distbench.options.launch import LaunchArgs, Machine, ResolvedLaunch, resolve_launch
from distbench.options.opt import with_groups
from distbench.pairs.args import PairsArgs, build_pairs_spec
from distbench.pairs.spec import PairsSpec
from distbench.pairs.table import render_standings

EXIT_OUTLIER = 1


@with_groups(pairs=PairsArgs, launch=LaunchArgs)
def pairs(pairs: PairsArgs, launch: LaunchArgs) -> None:
    """Every pair of ranks (or nodes) in concurrent rounds; names the slow ones (ranks.csv).

    \b
    Examples:
      distbench pairs --backend gloo --world-sizes 4 --sizes 1M
      distbench pairs --primitive allreduce --world-sizes 4 --fail-on-outlier
      distbench pairs --level node --nnodes 2 --nproc-per-node 8 --rdzv-endpoint HOST:29500
    """

    def build(chosen: ResolvedLaunch) -> PairsSpec:
        return build_pairs_spec(pairs, chosen)

    if launch.dry_run:  # the plan (or --resume refused), nothing launched: cli/run.py's own path
        raise typer.Exit(run_workload(launch, "pairs", build, resumed_by="pairs"))
    if launch.resume is not None:
        code = resume_run(launch.resume, "pairs", quiet=launch.quiet)
        run_dir = Path(launch.resume)
    else:
        resolved = resolve_launch(launch, Machine.probe())
        specs = build_specs([resolved], build, launch.out, "pairs")
        run_dir = Path(specs[0].launch.run_dir)
        code = run_specs(specs, "pairs", quiet=launch.quiet)
    standings = read_rows(run_dir / RANKS_CSV)
    if standings:
        print(render_standings(standings), flush=True)
    if code == 0 and pairs.fail_on_outlier and any(r["outlier"] == "true" for r in standings):
        print("distbench: --fail-on-outlier: an outlier was found", file=sys.stderr)
        code = EXIT_OUTLIER
    raise typer.Exit(code)
