"""The figures of an overlap row, from its phases' times (torch-free: rows, report and tests use
them). Every time is the p50 over samples of the slowest rank's time (docs/overlap.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Figures:
    """What one case's phases come to."""

    overlap_efficiency: float
    """(t_compute + t_comm - t_both) / min(t_compute, t_comm): 1 when the shorter of the two is
    wholly hidden, 0 when they run one after the other, below 0 when running them together
    costs more than one after the other (they compete for the same resources)."""
    compute_slowdown: float
    """compute's time inside `both` / t_compute (1: unslowed)."""
    comm_slowdown: float
    """the collective's time inside `both`, issue to completion / the same alone (1: unslowed)."""
    osu_overlap_pct: float
    """OSU's non-blocking collective overlap, max(0, 100 - (t_both - compute inside both) /
    t_comm x 100), on these times (OSU averages over ranks instead)."""


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 and math.isfinite(a) else math.nan


def overlap_figures(
    t_compute: float,
    t_comm: float,
    t_both: float,
    compute_in_both: float,
    comm_in_both: float,
    comm_completion: float,
) -> Figures:
    """The case's figures from its six times (us): the three phases, `both`'s two parts, and
    the collective alone from issue to completion by the clock of its part in `both`."""
    shorter = min(t_compute, t_comm)
    hidden = t_compute + t_comm - t_both
    osu = max(0.0, 100.0 - ratio(t_both - compute_in_both, t_comm) * 100.0)
    return Figures(
        overlap_efficiency=ratio(hidden, shorter),
        compute_slowdown=ratio(compute_in_both, t_compute),
        comm_slowdown=ratio(comm_in_both, comm_completion),
        osu_overlap_pct=osu if math.isfinite(ratio(t_both, t_comm)) else math.nan,
    )
