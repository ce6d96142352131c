"""What `distbench compare` and `distbench baseline ...` do, from the strings the user typed to the
exit code, so that the CLI stays a list of options.

    distbench baseline save results/2026-11-28T0200Z-nightly --name nightly
    distbench compare nightly results/2026-11-29T0200Z-nightly --format markdown
"""

from __future__ import annotations

from pathlib import Path

from distbench.parse import UsageError, parse_choice
from distbench.reports.baselines import (
    list_baselines,
    render_baselines,
    resolve_run,
    resolve_store,
    save_baseline,
)
from distbench.reports.checks import Thresholds, load_thresholds, parse_check, parse_metric
from distbench.reports.compare import RENDERERS, compare_runs
from distbench.reports.runs import load_run

FORMATS = tuple(RENDERERS)


def parse_alpha(text: str) -> float:
    try:
        alpha = float(text)
    except ValueError:
        alpha = -1.0
    if not 0 < alpha < 1:
        raise UsageError(f"--alpha '{text}' must be a probability between 0 and 1, e.g. 0.05")
    return alpha


def run_compare(
    baseline: str,
    current: str,
    metric: str = "time_us_p50",
    threshold: str = "5%",
    thresholds_file: str | None = None,
    alpha: str = "0.05",
    output_format: str = "table",
    store: str | None = None,
    noise_test: bool = True,
) -> tuple[int, str]:
    """Exit code (0 no regression, 1 regression) and the rendered comparison; UsageError for
    bad input (exit 2)."""
    renderer = RENDERERS[parse_choice(output_format, FORMATS, "format")]
    check = parse_check(threshold)
    chosen = check.metric or parse_metric(metric)
    thresholds = Thresholds(check.threshold)
    if thresholds_file:
        thresholds = load_thresholds(Path(thresholds_file), check.threshold)
    store_path = resolve_store(store)
    base_run = load_run(resolve_run(baseline, store_path))
    cur_run = load_run(resolve_run(current, store_path))
    comparison = compare_runs(
        base_run, cur_run, chosen, thresholds, parse_alpha(alpha), noise=noise_test
    )
    return comparison.exit_code, renderer(comparison)


def run_baseline_save(run_dir: str, name: str, store: str | None, force: bool) -> str:
    target = save_baseline(Path(run_dir), name, resolve_store(store), force=force)
    return f"saved baseline '{target.name}' in {target.parent} (from {run_dir})"


def run_baseline_list(store: str | None) -> str:
    store_path = resolve_store(store)
    return render_baselines(store_path, list_baselines(store_path))
