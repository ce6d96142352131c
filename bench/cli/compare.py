"""`distbench compare` and `distbench baseline ...`: the regression gate's commands. compare's
options are declared once, parsed where they are declared (distbench.reports.compare.options'
CompareOptions: a Metric, a Check with its Threshold, the thresholds file's rules, ...), and
handed as that object to distbench.reports.compare.cli, which decides; that one is imported
lazily, as it loads pandas."""

from __future__ import annotations

from typing import Annotated

import typer

from distbench.options.opt import with_groups
from distbench.reports.compare.options import STORE, CompareOptions


@with_groups(options=CompareOptions)
def compare(
    baseline: Annotated[str, typer.Argument(help="Run directory or saved baseline name.")],
    current: Annotated[str, typer.Argument(help="Run directory (or baseline name).")],
    options: CompareOptions,
    min_samples: Annotated[str | None, typer.Option("--min-samples", hidden=True)] = None,
    fdr: Annotated[bool | None, typer.Option("--fdr/--no-fdr", hidden=True)] = None,
    adjacent: Annotated[bool | None, typer.Option("--adjacent/--any-size", hidden=True)] = None,
    noise_test: Annotated[
        bool | None, typer.Option("--noise-test/--no-noise-test", hidden=True)
    ] = None,
) -> None:
    """Compare two runs, nights or baseline windows, row by row and band by band. Between runs the
    launch is the unit: a row or band regresses when it is past the launches' noise (the false
    discovery rate of Benjamini and Hochberg over every hypothesis) and past the threshold floor.
    Each row says what it could see (the smallest change it would catch). Exit 0 pass, 1 a row or
    band regressed, 4 rows of the baseline are missing, 5 cannot tell: most primitives moved at once
    against a baseline window, each its own way (the box changed), 2 bad input, 3 an internal
    error (a bug: its traceback, never a verdict). In a GitHub Actions
    job (or with --github) it also appends the Markdown to the job summary and annotates each
    regressed row or band.

    \b
    Examples:
      distbench compare results/monday results/tuesday
      distbench compare nightly results/today --threshold busbw:10% --format markdown
      distbench compare nightly results/today --save verdict.md --save verdict.json
    """
    from distbench.reports.compare.cli import refuse_removed, run_compare

    refuse_removed(min_samples=min_samples, fdr=fdr, adjacent=adjacent, noise_test=noise_test)
    code, report = run_compare(baseline, current, options)
    try:
        print(report, flush=True)
    except BrokenPipeError:  # `compare | head -1`: the verdict is known, its exit code stands
        from distbench.launch.closed import silence_closed_outputs

        silence_closed_outputs()
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
        bool, typer.Option("--force", help="Replace the whole window by this night.")
    ] = False,
    keep: Annotated[
        str | None,
        typer.Option(
            help="Nights the window keeps, the newest by when they ran [default: the window's "
            "own; 14 for a new one].",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Append a night (a run, or a night's launch-N folders) to the named baseline window, which
    keeps the last --keep nights by when they ran. Refuses a night that did not complete or was
    resumed, and a folder that is not one night (runs that measured the same cases: save each
    on its own); a night it holds already changes nothing.

    \b
    Example:
      distbench baseline save results/nightly-20261129T020000Z --name nightly
    """
    from distbench.reports.compare.cli import run_baseline_save

    print(run_baseline_save(run_dir, name, store, force, keep))


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
    from distbench.reports.compare.cli import run_baseline_delete

    print(run_baseline_delete(name, store))


@baseline_app.command("list")
def baseline_list(store: Store = None) -> None:
    """List the saved baselines."""
    from distbench.reports.compare.cli import run_baseline_list

    print(run_baseline_list(store))
