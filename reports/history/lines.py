"""The lines of a history page that say how its series were judged: relative or absolute, and
what the whole run is (mode_line); at which drift's phi (drift_line). reports/history/build.py
puts them on the History it returns.

    mode_line(series, relative=True)   # 'relative: each case judged beyond the rest of its run ...'
    drift_line(judged)                 # 'drift: 108 series share their history's AR(1) phi ...'
"""

from __future__ import annotations

import numpy as np

from distbench.reports.history.detect import Series
from distbench.stats.changepoint import SeriesChanges
from distbench.stats.changepoint_pool import POOL_MIN
from distbench.stats.common import MIN_RELATIVE


def mode_line(series: list[Series], relative: bool) -> str:
    """'relative: each case judged beyond the rest of its run ...; whole run (comm): ...', or
    why a kind's cases are judged each on its own level."""
    if not series:
        return ""
    if not relative:
        return (
            "absolute (--absolute): each case judged on its own level; a change of the box "
            "moves every case"
        )
    wholes = sorted({s.case for s in series if s.whole_run})
    own = sorted({s.kind for s in series if s.common is None and not s.whole_run})
    parts = []
    if wholes:
        parts.append(
            "relative: each case judged beyond the rest of its run (its level less the run's "
            "common level that night, the median over the primitives); what moved every "
            f"primitive alike is the series {', '.join(wholes)} (a ratio: 1 = its mean over these "
            "nights), "
            "judged at its own drift"
        )
    if own:
        parts.append(
            f"{', '.join(own)}: each case on its own level (fewer than {MIN_RELATIVE} "
            "primitives, or most of its nights measured by fewer)"
        )
    return "; ".join(parts)


def drift_line(judged: list[SeriesChanges]) -> str:
    """'drift: 108 series share their history's AR(1) phi (0.45, fitted); 3 judged each at its
    own phi (median 0.52): ...': which series were judged at their history's pooled phi
    (distbench.stats.changepoint_pool) and which at their own."""
    known = [j for j in judged if np.isfinite(j.noise.phi[0])]
    pooled = sorted({f"{j.noise.phi[0]:.2f}" for j in known if j.noise.pooled[0]})
    shared = sum(bool(j.noise.pooled[0]) for j in known)
    own = [float(j.noise.phi[0]) for j in known if not j.noise.pooled[0]]
    parts = []
    if shared:
        shown = ", ".join(pooled[:3]) + (", ..." if len(pooled) > 3 else "")
        parts.append(f"{shared} series share their history's AR(1) phi ({shown}, fitted)")
    if own:
        why = (
            f"fewer than {POOL_MIN} series to pool"
            if len(known) < POOL_MIN
            else f"fewer than {POOL_MIN} series of one length, phi that differ, or one drift "
            "they share"
        )
        parts.append(
            f"{len(own)} judged each at its own phi (median {float(np.median(own)):.2f}): {why}"
        )
    return "drift: " + "; ".join(parts) if parts else ""
