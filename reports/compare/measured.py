"""How each side was measured, for compare's context lines: the settings of the workload that
change what a row's number is (trials, iterations, warm-up, trial order, --precision) where the
two sides differ. A row's min over 40 trials is not its min over 12, and a p50 of 20 ops a trial
is not one of 5: compare still judges such rows, and says how they differ (nccl-tests' -n and -w
are the same kind of setting)."""

from __future__ import annotations

from typing import Any

from distbench.reports.compare.judge import Comparison
from distbench.tables import natural_key

SETTINGS = {
    "trials": "trials",
    "iters": "iterations a trial",
    "warmup": "warm-up",
    "trial_order": "trial order",
    "iters_auto": "iterations chosen by time",
    "precision": "--precision",
    "steps": "timed steps",
}
"""workload keys of spec (manifest.json's `spec`) -> their words."""


def workload_values(manifest: dict[str, Any], key: str) -> set[str]:
    """One launch's value of `key` (empty where its manifest has no spec)."""
    workload = (manifest.get("spec") or {}).get("workload") or {}
    return {str(workload[key])} if key in workload else set()


def settings_lines(comparison: Comparison) -> list[str]:
    """'measured differently: trials 12 -> 40, iterations a trial 5 -> 20', or nothing."""
    differs = []
    for key, words in SETTINGS.items():
        sides = [
            set().union(
                *(workload_values(launch.run.manifest or {}, key) for launch in side.launches)
            )
            for side in (comparison.baseline, comparison.current)
        ]
        if all(sides) and sides[0] != sides[1]:
            base, current = ("/".join(sorted(values, key=natural_key)) for values in sides)
            differs.append(f"{words} {base} -> {current}")
    if not differs:
        return []
    return [
        f"measured differently: {', '.join(differs)} (a row's number depends on them: compare "
        "like with like)"
    ]
