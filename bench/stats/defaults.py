"""The stated default between-launch spread: what a comparison assumes about the noise between
launches while its baseline is too young to have measured it (fewer than --min-nights nights, or
two single runs).

Measured on this project's development box (gloo, a shared 2-core VM, the shipped nightly matrix;
docs/gate.md#the-default-spread gives the launches and the command). It is wide: a quieter
machine (a GPU node) is judged conservatively until its own window has learnt its noise, and every
verdict that leans on it says so. A launch value's default variance is the between-launch part
below plus the launch's own within-launch part (components.within_variance), so a run of few
trials is judged with the noise its trials show.
"""

from __future__ import annotations

import math

from distbench.stats.components import Prior

SOURCE = "the default spread of a shared 2-core box (docs/gate.md#the-default-spread)"
DEFAULT_DF = 4.0
"""The default prior weighs as much as 4 launches: a window's own launches soon outweigh it."""

BETWEEN_SD: dict[str, dict[str, float]] = {
    "min": {"small": 0.12, "mid": 0.10, "large": 0.08, "none": 0.10},
    "p50": {"small": 0.30, "mid": 0.30, "large": 0.25, "none": 0.10},
    "mean": {"small": 0.30, "mid": 0.30, "large": 0.25, "none": 0.10},
    "tail": {"small": 0.40, "mid": 0.40, "large": 0.35, "none": 0.20},
}
"""Between-launch standard deviation of log(value), per statistic family and size band (small
< 64 KiB, mid < 4 MiB, large; none: rows without a size, DDP and pipeline steps)."""


def statistic_family(column: str) -> str:
    """time_us_min -> min; time_us_p50, busbw_GBps, algbw_GBps -> p50 (they are size / p50);
    time_us_mean, samples_per_s -> mean; p95, p99, max -> tail."""
    if column.endswith("_min"):
        return "min"
    if column.endswith(("_p95", "_p99", "_max")):
        return "tail"
    if column.endswith("_mean") or column == "samples_per_s":
        return "mean"
    return "p50"


def default_prior(column: str, band: str, within: float) -> Prior:
    """The default prior of one row: the between-launch part for its statistic and size band,
    plus its own within-launch variance where known."""
    sd = BETWEEN_SD[statistic_family(column)].get(band, BETWEEN_SD["p50"]["mid"])
    variance = sd**2 + (within if math.isfinite(within) else 0.0)
    return Prior(variance, DEFAULT_DF, SOURCE)
