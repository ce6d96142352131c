"""From the built option groups to a finished run, the one sequence every measuring command
(the primitives, sweep, ddp) shares: --resume continues that run; otherwise the launch options
are resolved against this machine, the workload built, the run directory made, and the RunSpec
executed."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from distbench.cli.dryrun import NOTHING_LAUNCHED, plan_text
from distbench.collectors.rundir import node_dir
from distbench.launch.resume import resume_run
from distbench.launch.run import execute, file_logs, part_name, prepare_run_dir
from distbench.options.envsweep import env_combinations, inert_env_note
from distbench.options.launch import (
    LaunchArgs,
    Machine,
    ResolvedLaunch,
    build_launch_spec,
    resolve_launch,
)
from distbench.parse import UsageError
from distbench.spec import RunSpec

BuildWorkload = Callable[[ResolvedLaunch], Any]
"""The workload (a CommSpec, a DdpSpec ...) for one resolved launch."""


def run_workload(
    args: LaunchArgs,
    title: str,
    build: BuildWorkload,
    resumed_by: str | None,
    table: str = "default",
) -> int:
    """Resume, or resolve -> build -> run directory -> RunSpec -> execute; the exit code.
    `title`: the run directory's name part and the progress bar's; `resumed_by`: the primitive
    or workload whose command this is (None: sweep, which resumes any run); `table`: --table."""
    if args.resume is not None:
        if args.dry_run:
            raise UsageError("--dry-run checks a new run's options: leave out --resume")
        return resume_run(resume_dir(args), resumed_by, quiet=args.quiet, table=table)
    launch = resolve_launch(args, Machine.probe())
    if args.dry_run:
        plan = plan_text(title, [launch], [build(launch)], args.out)  # bad input refused first
        print(NOTHING_LAUNCHED, file=sys.stderr)
        print(plan)
        return 0
    specs = build_specs([launch], build, args.out, title)
    return run_specs(specs, title, quiet=args.quiet, table=table)


def resume_dir(args: LaunchArgs) -> str:
    """The directory --resume continues on this node: the one given, or, with --node-rank K > 0
    beside it (every node of a several-node run given one command, as ci/slurm-nightly.sbatch
    does), node K's own OUT/node<K> (launch/run.py prepare_run_dir), so node K does not load
    node 0's spec."""
    path = str(args.resume)
    rank = args.node_rank
    if rank is None or rank <= 0 or Path(path).name == f"node{rank}":
        return path
    return str(node_dir(Path(path), rank))


def build_specs(
    launches: Sequence[ResolvedLaunch], build: BuildWorkload, out: str | None, title: str
) -> list[RunSpec]:
    """One RunSpec per launch (a sweep matrix: one per backend) and --env combination, all in
    one new run directory; a later combination's measurement ids carry `env<k>/`."""
    workloads = [build(launch) for launch in launches]
    combos = env_combinations(launches[0].env)
    names = [axis.partition("=")[0] for axis in launches[0].env]
    for note in {inert_env_note(names, launch.backend) for launch in launches} - {None}:
        print(note, file=sys.stderr, flush=True)
    if launches[0].env and not all(hasattr(w, "tag") for w in workloads):
        raise UsageError(f"--env is not supported by {title} yet: drop --env")
    run_dir = prepare_run_dir(out, title, launches[0].label, launches[0].node_rank)
    specs = []
    for launch, workload in zip(launches, workloads, strict=True):
        base = build_launch_spec(launch, run_dir)
        for k, combo in enumerate(combos):
            tagged = replace(workload, tag=f"{workload.tag}env{k}/") if k else workload
            specs.append(RunSpec(launch=replace(base, env=combo), workload=tagged))
    return specs


def run_specs(
    specs: Sequence[RunSpec], title: str, quiet: bool = False, table: str = "default"
) -> int:
    """Execute the specs one after another into their run directory; the exit code. `quiet`:
    no progress display (--quiet); `table`: the terminal table's form (--table)."""
    code = execute(specs[0], title=title, more=specs[1:], quiet=quiet, table=table)
    if len(specs) > 1 and code == 0:
        file_logs(Path(specs[-1].launch.run_dir), part_name(specs[-1]))
    return code
