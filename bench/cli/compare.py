"""`distbench compare` and `distbench baseline ...`: the regression gate's options, defined once
(CompareOptions), and the commands that hand them to distbench.reports.gate, which parses the
thresholds, metric, alpha and format and decides; imported lazily, as it loads pandas."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Annotated

import typer

from distbench.cli.options import Opt, flag, text, with_groups

STORE = text("Baseline folder [default: $DISTBENCH_BASELINES, else ./baselines].")


@dataclass(frozen=True)
class CompareOptions:
    """compare's options as typed; reports.gate.CompareArgs has the same fields plus the two
    runs, and parses them."""

    metric: Annotated[
        str,
        text(
            "time_us_p50 (median), time_us_mean/min/max/p95/p99, busbw_GBps, algbw_GBps, "
            "samples_per_s (DDP)."
        ),
    ] = "time_us_p50"
    threshold: Annotated[
        str,
        text(
            "How much worse counts: 5% (of the baseline) or an amount with its unit (20us, "
            "2GB/s); METRIC:5% also picks the metric (median:5%). A bare number is refused."
        ),
    ] = "5%"
    thresholds_file: Annotated[
        str | None,
        text("TOML file of per-primitive / size-band thresholds.", None, "--thresholds"),
    ] = None
    alpha: Annotated[
        str, text("Significance of the rank test that separates a change from noise.")
    ] = "0.05"
    noise_test: Annotated[
        bool,
        flag("Require the samples to differ (rank test).", "--noise-test/--no-noise-test"),
    ] = True
    output_format: Annotated[
        str, text("table, markdown (CI job summaries) or json.", None, "--format")
    ] = "table"
    store: Annotated[str | None, STORE] = None
    save: Annotated[
        tuple[str, ...],
        Opt(
            "Also write the verdict to FILE (.md markdown, .json, else table); repeatable.",
            cli_type=list[str],
            decls=("--save",),
        ),
    ] = ()
    fdr: Annotated[
        bool,
        flag(
            "Benjamini-Hochberg across the rows: alpha bounds the false discovery rate, not "
            "each row's p.",
            "--fdr/--no-fdr",
        ),
    ] = True
    min_samples: Annotated[
        str,
        text(
            "Independent samples (trials; DDP windows) per side below which the rank test does "
            "not vote and the threshold alone decides."
        ),
    ] = "5"
    adjacent: Annotated[
        bool,
        flag(
            "A regression must show at two adjacent sizes of a case (one size: unconfirmed).",
            "--adjacent/--any-size",
        ),
    ] = True
    allow_missing: Annotated[
        bool,
        flag(
            "Rows of the baseline missing from the current run do not fail (else exit 4).",
            "--allow-missing",
        ),
    ] = False


@with_groups(options=CompareOptions)
def compare(
    baseline: Annotated[str, typer.Argument(help="Run directory or saved baseline name.")],
    current: Annotated[str, typer.Argument(help="Run directory (or baseline name).")],
    options: CompareOptions,
) -> None:
    """Compare two runs row by row. Exit 0 pass, 1 a row regressed (past its threshold, past the
    noise, at two adjacent sizes), 4 rows of the baseline are missing, 2 bad input.

    \b
    Examples:
      distbench compare results/monday results/tuesday
      distbench compare nightly results/today --threshold busbw:10% --format markdown
      distbench compare nightly results/today --thresholds ci/thresholds-example.toml
      distbench compare nightly results/today --save verdict.md --save verdict.json
    """
    from distbench.reports.gate import CompareArgs, run_compare

    typed = {f.name: getattr(options, f.name) for f in fields(options)}
    code, report = run_compare(CompareArgs(baseline, current, **typed))
    print(report)
    raise typer.Exit(code)


Store = Annotated[str | None, typer.Option(help=STORE.help)]

baseline_app = typer.Typer(
    help="Save, list and delete named baselines for distbench compare.", no_args_is_help=True
)


@baseline_app.command("save")
def baseline_save(
    run_dir: Annotated[str, typer.Argument(help="The run directory to pin.")],
    name: Annotated[str, typer.Option(help="Baseline name, e.g. nightly or a100-torch2.13.")],
    store: Store = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace a baseline of that name.")
    ] = False,
) -> None:
    """Copy a run's results, samples and manifest into the baseline store.

    \b
    Example:
      distbench baseline save results/20261129T020000Z-sweep --name nightly
    """
    from distbench.reports.gate import run_baseline_save

    print(run_baseline_save(run_dir, name, store, force))


@baseline_app.command("delete")
def baseline_delete(
    name: Annotated[str, typer.Argument(help="The baseline to remove from the store.")],
    store: Store = None,
) -> None:
    """Remove a saved baseline from the store.

    \b
    Example:
      distbench baseline delete nightly-old
    """
    from distbench.reports.gate import run_baseline_delete

    print(run_baseline_delete(name, store))


@baseline_app.command("list")
def baseline_list(store: Store = None) -> None:
    """List the saved baselines."""
    from distbench.reports.gate import run_baseline_list

    print(run_baseline_list(store))
