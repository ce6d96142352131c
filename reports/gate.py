"""What `distbench compare` and `distbench baseline ...` do, from the strings the user typed to the
exit code, so that the CLI stays a list of options.

    distbench baseline save results/2026-11-28T0200Z-nightly --name nightly
    distbench compare nightly results/2026-11-29T0200Z-nightly --format markdown
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from distbench.parse import UsageError, parse_choice
from distbench.reports.baselines import (
    delete_baseline,
    list_baselines,
    render_baselines,
    resolve_run,
    resolve_store,
    save_baseline,
)
from distbench.reports.checks import Thresholds, load_thresholds, parse_check, parse_metric
from distbench.reports.compare import GateRule, compare_runs
from distbench.reports.compare_ci import ci_band_notes
from distbench.reports.compare_render import RENDERERS
from distbench.reports.launches import load_pooled

FORMATS = tuple(RENDERERS)


def parse_alpha(text: str) -> float:
    try:
        alpha = float(text)
    except ValueError:
        alpha = -1.0
    if not 0 < alpha < 1:
        raise UsageError(f"--alpha '{text}' must be a probability between 0 and 1, e.g. 0.05")
    return alpha


def parse_min_samples(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise UsageError(f"--min-samples '{text}' must be a whole number of at least 1, e.g. 5")
    return int(text)


@dataclass(frozen=True)
class CompareArgs:
    """`distbench compare` as typed: every value a string until parsed here."""

    baseline: str
    """Run directory or baseline name."""
    current: str
    metric: str = "time_us_p50"
    threshold: str = "5%"
    """`5%`, an amount with its unit (`20us`), or `METRIC:5%`."""
    thresholds_file: str | None = None
    alpha: str = "0.05"
    output_format: str = "table"
    store: str | None = None
    noise_test: bool = True
    save: tuple[str, ...] = ()
    """Files to write as well, the format from the suffix: .md, .json, anything else a table."""
    fdr: bool = GateRule.fdr
    min_samples: str = str(GateRule.min_samples)
    adjacent: bool = GateRule.adjacent
    allow_missing: bool = False


def format_for(path: Path) -> str:
    return {".md": "markdown", ".json": "json"}.get(path.suffix.lower(), "table")


def run_compare(args: CompareArgs) -> tuple[int, str]:
    """Exit code (0 pass, 1 regression, 4 rows missing) and the rendered comparison;
    UsageError for bad input (exit 2). Files named by --save are written before returning."""
    renderer = RENDERERS[parse_choice(args.output_format, FORMATS, "format")]
    check = parse_check(args.threshold)
    chosen = check.metric or parse_metric(args.metric)
    thresholds = Thresholds(check.threshold)
    if args.thresholds_file:
        thresholds = load_thresholds(Path(args.thresholds_file), check.threshold)
    thresholds.check_units(chosen)
    rule = GateRule(
        thresholds=thresholds,
        alpha=parse_alpha(args.alpha),
        noise_test=args.noise_test,
        fdr=args.fdr,
        min_samples=parse_min_samples(args.min_samples),
        adjacent=args.adjacent,
        allow_missing=args.allow_missing,
    )
    store_path = resolve_store(args.store)
    base_run, base_note = load_pooled(resolve_run(args.baseline, store_path))
    cur_run, cur_note = load_pooled(resolve_run(args.current, store_path))
    comparison = compare_runs(base_run, cur_run, chosen, rule)
    comparison.notes.extend(note for note in (base_note, cur_note) if note)
    comparison.notes.extend(ci_band_notes(comparison, base_run, cur_run))
    for name in args.save:
        path = Path(name)
        try:
            path.write_text(RENDERERS[format_for(path)](comparison) + "\n")
        except OSError as error:
            raise UsageError(f"cannot write --save {path}: {error.strerror}") from None
    return comparison.exit_code, renderer(comparison)


def run_baseline_save(run_dir: str, name: str, store: str | None, force: bool) -> str:
    target = save_baseline(Path(run_dir), name, resolve_store(store), force=force)
    return f"saved baseline '{target.name}' in {target.parent} (from {run_dir})"


def run_baseline_delete(name: str, store: str | None) -> str:
    store_path = resolve_store(store)
    target = delete_baseline(name, store_path)
    return f"deleted baseline '{name}' ({target})"


def run_baseline_list(store: str | None) -> str:
    store_path = resolve_store(store)
    return render_baselines(store_path, list_baselines(store_path))
