"""`distbench acceptance`: its own options (AcceptanceArgs) beside the launch group; the work is
acceptance/runner.py's."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated

import typer

from distbench.acceptance.runner import Acceptance, run_acceptance
from distbench.options.launch import LaunchArgs
from distbench.options.opt import flag, text, with_groups
from distbench.parse import UsageError


def parse_budget(value: str) -> float:
    """Minutes, a positive number."""
    try:
        minutes = float(value)
    except ValueError:
        minutes = math.nan
    if not math.isfinite(minutes) or minutes <= 0:
        raise UsageError(f"--budget '{value}' is not a positive number of minutes, e.g. 30")
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
            "Minutes for the whole run: sizes and trials are cut to fit (each cut named) "
            "[default: no cut].",
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
    raise typer.Exit(run_acceptance(choice, launch))
