"""`distbench acceptance`: its own options (AcceptanceArgs) beside the launch group, and its two
launches as every command runs them (cli/run.py, cli/sweep.py); the rest is
acceptance/runner.py's."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated

import typer

from distbench.acceptance.plan import Plan
from distbench.acceptance.runner import Acceptance, Launched, Stages, run_acceptance
from distbench.cli.run import build_specs, run_specs
from distbench.cli.sweep import build_matrix_specs, load_config
from distbench.comm.primitive_args import build_workload
from distbench.options.launch import LaunchArgs, Machine, ResolvedLaunch, resolve_launch
from distbench.options.opt import flag, text, with_groups
from distbench.pairs.args import PairsArgs, build_pairs_spec
from distbench.parse import UsageError, parse_size

BUDGET_UNITS = {"": 1.0, "m": 1.0, "min": 1.0, "s": 1 / 60, "h": 60.0}
"""--budget's units, in minutes (a bare number is minutes; the primitives' per-measurement
--budget reads a bare number as seconds, and both take a unit)."""


def parse_budget(value: str) -> float:
    """Minutes, a positive number: 30, 30m, 30min, 90s or 1h."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-z]*)\s*", value.lower())
    unit = match.group(2) if match else "?"
    minutes = float(match.group(1)) * BUDGET_UNITS[unit] if match and unit in BUDGET_UNITS else 0
    if not math.isfinite(minutes) or minutes <= 0:
        raise UsageError(
            f"--budget '{value}' is not a positive time for the whole run: minutes (30, 30m), "
            "or 90s, 1h"
        )
    return minutes


def parse_share(value: str) -> float:
    """A share of the reference value, above 0 and at most 1."""
    try:
        share = float(value)
    except ValueError:
        share = math.nan
    if not 0 < share <= 1:
        raise UsageError(
            f"--reference-share '{value}' is not a share above 0 and at most 1, e.g. 0.8 "
            "(a busbw below 80 % of the reference fails)"
        )
    return share


@dataclass(frozen=True)
class AcceptanceArgs:
    budget: Annotated[
        float | None,
        text(
            "Time for the whole run, e.g. 30 (minutes), 30m, 90s, 1h: sizes and trials are cut "
            "to fit (each cut named) [default: no cut].",
            parse_budget,
        ),
    ] = None
    quick: Annotated[
        bool, flag("Small sizes, one dtype, 3 trials: minutes on loopback nodes.", "--quick")
    ] = False
    reference: Annotated[
        str | None,
        text("TOML of expected busbw, as report --reference (docs: reference-values)."),
    ] = None
    reference_share: Annotated[
        float,
        text("A row below this share of its reference busbw fails every node.", parse_share),
    ] = 0.8


HIDDEN = ("world_sizes", "resume", "separate_launches", "env")


def stage_launch(launch: LaunchArgs, out: Path, name: str) -> tuple[LaunchArgs, ResolvedLaunch]:
    staged = replace(launch, out=str(out / name))
    return staged, resolve_launch(staged, Machine.probe())


def check_matrix(path: Path, resolved: ResolvedLaunch) -> None:
    matrix = load_config(path)
    build_workload(matrix.primitives, matrix.comm, matrix.primitive_args, resolved)


def launch_pairs(plan: Plan, launch: LaunchArgs, out: Path) -> Launched:
    args = PairsArgs(
        level=plan.pairs_level,
        sizes=(parse_size(plan.pairs_size),),
        trials=plan.pairs_trials,
        iters=plan.pairs_iters,
    )
    staged, resolved = stage_launch(launch, out, "pairs")
    specs = build_specs([resolved], lambda r: build_pairs_spec(args, r), staged.out, "pairs")
    return run_specs(specs, "pairs", quiet=launch.quiet), Path(specs[0].launch.run_dir)


def launch_sweep(path: Path, launch: LaunchArgs, out: Path) -> Launched:
    staged, _ = stage_launch(launch, out, "sweep")
    specs = build_matrix_specs(load_config(path), staged)
    return run_specs(specs, "sweep", quiet=launch.quiet), Path(specs[0].launch.run_dir)


STAGES = Stages(check_matrix=check_matrix, pairs=launch_pairs, sweep=launch_sweep)


@with_groups(HIDDEN, acceptance=AcceptanceArgs, launch=LaunchArgs)
def acceptance(acceptance: AcceptanceArgs, launch: LaunchArgs) -> None:
    """Is this cluster healthy: pairs, the nightly matrix at the full world size, the report
    with reference values and What differs; PASS or FAIL per node (OUT/acceptance.json).

    Exit codes: 0 every node passes, 1 a node fails, 2 bad input, 3 a benchmark run failed.

    Two loopback nodes on one machine: docs/acceptance.md.

    \b
    Examples:
      distbench acceptance --nnodes 4 --node-rank 0 --rdzv-endpoint node01:29500 --budget 30
      distbench acceptance --backend nccl --reference expected.toml --reference-share 0.8
    """
    choice = Acceptance(
        budget_min=acceptance.budget,
        quick=acceptance.quick,
        reference=acceptance.reference,
        share=acceptance.reference_share,
    )
    raise typer.Exit(run_acceptance(choice, launch, STAGES))
