"""What `distbench compare` and `distbench baseline ...` do, from the options the CLI parsed
(options.py's CompareOptions) to the exit code, so that the CLI stays a list of options.

    distbench baseline save results/nightly-20261128T0200Z --name nightly
    distbench compare nightly results/nightly-20261129T0200Z --format markdown
"""

from __future__ import annotations

from pathlib import Path

from distbench.collectors.schema import COMM_MATCH_KEY, DDP_CASE_COLUMNS, DDP_MATCH_KEY
from distbench.parse import UsageError
from distbench.reports.compare.github import publish
from distbench.reports.compare.judge import (
    CHANGED,
    ONLY_BASELINE,
    ONLY_CURRENT,
    SKIPPED,
    Comparison,
    compare_sides,
)
from distbench.reports.compare.options import CompareOptions
from distbench.reports.compare.render import RENDERERS
from distbench.reports.compare.sides import load_side
from distbench.reports.compare.window import (
    delete_baseline,
    list_baselines,
    parse_keep,
    resolve_run,
    resolve_store,
    save_night,
)
from distbench.reports.keydiff import explain_no_common_rows
from distbench.tables import render_rows

REMOVED = {
    "min_samples": "--min-samples",
    "fdr": "--fdr/--no-fdr",
    "adjacent": "--adjacent/--any-size",
    "noise_test": "--noise-test/--no-noise-test",
}
"""0.2.0's options of the trial-level rule, refused in one line (docs/upgrading.md)."""


def refuse_removed(**given: object) -> None:
    """One line for an option of 0.2.0's gate: between runs the unit is now the launch."""
    for name, value in given.items():
        if value is not None:
            raise UsageError(
                f"{REMOVED[name]} was removed in 0.3: compare no longer tests trials across "
                "launches (the launch is the unit; Benjamini-Hochberg runs over every row and "
                "band); drop it, and see --min-nights and --threshold (docs/gate.md)"
            )


def format_for(path: Path) -> str:
    return {".md": "markdown", ".json": "json", ".xml": "junit"}.get(path.suffix.lower(), "table")


def run_compare(baseline_name: str, current_name: str, options: CompareOptions) -> tuple[int, str]:
    """Exit code (0 pass, 1 regression, 4 rows missing) and the rendered comparison of two runs,
    nights or baseline names, with `options` as the CLI parsed them; UsageError for bad input
    (exit 2). Files named by --save are written before returning, and with --github (or in a
    GitHub Actions job) the job summary and the annotations (github.py)."""
    metric, thresholds = options.chosen_metric, options.thresholds
    thresholds.check_units(metric)
    store = resolve_store(options.store)
    baseline = load_side(resolve_run(baseline_name, store))
    current = load_side(resolve_run(current_name, store))
    comparison = compare_sides(
        baseline, current, metric, thresholds, options.settings(), options.allow_missing
    )
    if not comparison.outcome.rows:
        raise UsageError(no_rows_message(comparison))
    for name in options.save:
        path = Path(name)
        try:
            path.write_text(RENDERERS[format_for(path)](comparison) + "\n")
        except OSError as error:
            raise UsageError(f"cannot write --save {path}: {error.strerror}") from None
    if options.github_wanted():
        publish(comparison)
    return comparison.exit_code, RENDERERS[options.output_format](comparison)


def no_rows_message(comparison: Comparison) -> str:
    """compare's one line when no row matched: the metric's absence, else what keeps the two
    sides' rows apart (reports/keydiff.py names a lone differing column such as env)."""
    skipped = [u.reason for u in comparison.unmatched if u.outcome == SKIPPED]
    if skipped and not any(u.outcome == ONLY_BASELINE for u in comparison.unmatched):
        return (
            f"--metric {comparison.metric.name}: {skipped[0]}: choose time_us_p50, busbw_GBps "
            "or samples_per_s (DDP)"
        )
    changed = [u for u in comparison.unmatched if u.outcome == CHANGED]
    if changed:  # the rows match, but no number means the same on both sides
        return (
            f"{comparison.baseline.path} and {comparison.current.path}: "
            f"{'the row' if len(changed) == 1 else f'the {len(changed)} rows'} they share cannot "
            f"be compared: {changed[0].reason} (docs/upgrading.md); compare runs of one schema "
            "version, or re-measure the older one"
        )
    base = [u.key for u in comparison.unmatched if u.outcome == ONLY_BASELINE]
    current = [u.key for u in comparison.unmatched if u.outcome == ONLY_CURRENT]
    kinds = {k.get("kind") for k in (*base, *current)}
    columns = DDP_MATCH_KEY if kinds == {"ddp"} else COMM_MATCH_KEY
    cause = explain_no_common_rows(base, current, columns) if kinds <= {"comm", "ddp"} else ""
    return (
        f"{comparison.baseline.path} and {comparison.current.path} have no row in common"
        + (f": {cause}" if cause else f" (rows match on {', '.join(COMM_MATCH_KEY)}; DDP rows "
           f"on {', '.join(DDP_CASE_COLUMNS)}): compare runs of the same sweep")
    )  # fmt: skip


def run_baseline_save(
    run_dir: str, name: str, store: str | None, force: bool, keep: str | None = None
) -> str:
    nights = parse_keep(keep) if keep is not None else None
    target, what = save_night(Path(run_dir), name, resolve_store(store), nights, force)
    return f"saved {run_dir} into baseline '{target.name}' in {target.parent}: {what}"


def run_baseline_delete(name: str, store: str | None) -> str:
    target = delete_baseline(name, resolve_store(store))
    return f"deleted baseline '{name}' ({target})"


def run_baseline_list(store: str | None) -> str:
    store_path = resolve_store(store)
    baselines = list_baselines(store_path)
    if not baselines:
        return (
            f"no baselines in {store_path} (save one: distbench baseline save RUN_DIR --name NAME)"
        )
    header = ("name", "nights", "keep", "oldest", "newest", "rows", "host", "torch")
    lines = [
        (b.name, str(b.nights), str(b.keep), b.first, b.last, str(b.rows), b.host, b.torch)
        for b in baselines
    ]
    rendered = render_rows(header, lines, numeric=("nights", "keep", "rows"))
    return "\n".join([f"baselines in {store_path}:", *rendered])
