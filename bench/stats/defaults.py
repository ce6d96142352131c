"""The stated default between-launch spread: what a comparison assumes about the noise between
launches while its baseline is too young to have measured it (fewer than --min-nights nights, or
two single runs).

Measured on this project's development box (gloo, a shared 2-core VM, the shipped nightly matrix;
docs/gate.md#the-default-spread gives the launches and the command). It is wide: a quieter
machine (a GPU node) is judged conservatively until its own window has learnt its noise, and every
verdict that leans on it says so. A default calibrated to this box's average session (the rows'
fitted prior) held 81-98 % of one-launch-a-side intervals by session, 81 % in a noisy one; this
one holds 99-100 % in every recorded session (docs/gate.md#the-default-spread). A launch value's
default variance is the between-launch part below plus the launch's own within-launch part
(components.within_variance), so a run of few trials is judged with the noise its trials show.
"""

from __future__ import annotations

import math

from distbench.stats.components import Prior

SOURCE = "the default spread of a shared 2-core box (docs/gate.md#the-default-spread)"
DEFAULT_DF = 4.0
"""The default prior weighs as much as 4 launches: a window's own launches soon outweigh it."""

BETWEEN_SD: dict[str, dict[str, float]] = {
    "min": {"small": 0.25, "mid": 0.19, "large": 0.19, "none": 0.29},
    "p50": {"small": 0.46, "mid": 0.38, "large": 0.38, "none": 0.36},
    "mean": {"small": 0.44, "mid": 0.37, "large": 0.37, "none": 0.49},
    "tail": {"small": 0.58, "mid": 0.48, "large": 0.48, "none": 0.49},
}
"""Between-launch standard deviation of log(value) beyond a launch's within part, per statistic
family and size band (small < 64 KiB, mid < 4 MiB, large; none: rows without a size, DDP and
pipeline steps): the 90th percentile over rows of the launch-to-launch spread inside recording
groups (`python ci/bench_stats.py --spread --metric M`; communication rows: the tuning groups g0
and g1 of tests/data/launches-nightly-cpu.json.gz, 48 launches of the nightly matrix; none: 10
DDP launches of tests/data/gate-launches-ddp.json). Not measured, and so stated in the docs:
large (the matrix stops at 1M: mid's figure) and tail (p95, p99, max: p50's x 1.25)."""


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
