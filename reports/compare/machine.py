"""What the machine was doing while each side ran, from its manifests, for compare's context
lines: the load as launches started and the CPU time the hypervisor took. Unchanged code on a box
whose load or host moved gets other verdicts (docs/gate.md, g4 and g5), so both are shown beside
them, and only where every side recorded them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from distbench.reports.compare.judge import Comparison

Manifest = dict[str, Any]


def side_ranges(
    comparison: Comparison, read: Callable[[Manifest], float | None], unit: str
) -> str | None:
    """'baseline LOW-HIGH, current V' over each side's launches of what `read` takes from a
    launch's manifest (formatted by `unit`); None where a side has no launch that recorded it."""
    parts = []
    for name, side in (("baseline", comparison.baseline), ("current", comparison.current)):
        values = [v for launch in side.launches if (v := read(launch.run.manifest)) is not None]
        if not values:
            return None
        low, high = format(min(values), unit), format(max(values), unit)
        parts.append(f"{name} {low}" if low == high else f"{name} {low}-{high}")
    return ", ".join(parts)


def first_load(manifest: Manifest) -> float | None:
    """The 1-minute load average as the launch started (load_avg_start's first)."""
    load = manifest.get("load_avg_start")
    return float(load[0]) if isinstance(load, list) and load else None


def steal(manifest: Manifest) -> float | None:
    share = manifest.get("cpu_steal_share")
    return float(share) if isinstance(share, (int, float)) else None


def machine_lines(comparison: Comparison) -> list[str]:
    lines = []
    if loads := side_ranges(comparison, first_load, ".1f"):
        lines.append(
            f"machine load as launches started (1-minute average): {loads}"
            " (a change of load changes verdicts: docs/gate.md, held out on a quiet box)"
        )
    if shares := side_ranges(comparison, steal, ".1%"):
        lines.append(f"CPU time stolen by the hypervisor during the launches: {shares}")
    return lines
