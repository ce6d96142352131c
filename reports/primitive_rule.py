"""compare's per-primitive verdict: did one primitive get slower than the others?

A regression in a primitive's code path (a slower broadcast) slows every row of that primitive;
a busy box slows every row of the run. So for each primitive, its rows' log slowdowns (the gate's
metric, current over baseline, direction-aware) are set against the other primitives' rows of
the same comparison with a one-sided rank test (reports/noise.py): are this primitive's rows
slower than the rest? Then Benjamini-Hochberg across the primitives tested, and a minimum effect:
the primitive's median slowdown beyond the others' median must reach `min_effect`.

Why it holds its level: with --order interleaved (comm/interleave.py), each row's trials are
spread over the whole launch, so rows of one primitive move nearly independently from launch to
launch, and on unchanged code a primitive's rows are exchangeable with the others': the rank
test's p is then uniform. A whole-run shift (the box busier tonight) moves every primitive alike
and cancels. A finer reference was measured and not built: each row against the other
primitives' rows of its own world size (or world size, dtype and size) left the variance of the
rows' log ratios between launches where it was (0.0466 -> 0.0448) or raised it (0.0558): rows of
different primitives share little of a launch's effect beyond the whole run's (docs: the nightly
gate). What did help is measuring each side twice (ci/nightly.sh --launches 2, pooled by
reports/launches.py), which halves the variance between launches that the test sees.

The other side of the whole-run shift cancelling: a change that slows every primitive alike
is not this check's to see (the per-row rule still is). With sequential order the rows of a
primitive share the seconds they ran in and move together, and the rank test's independence
fails (ci/bench_gate.py measures both).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from distbench.reports.noise import bh_adjust, rank_test

MIN_ROWS = 5
"""Rows a primitive (and the rest) needs for its test to vote."""


@dataclass(frozen=True)
class PrimitiveVerdict:
    """One primitive's rows against the other primitives' rows of one comparison."""

    primitive: str
    rows: int
    """Its compared rows (every size, dtype, mode, world size)."""
    median_slowdown: float
    """Median over its rows of current / baseline in time terms (1.24: 24 % slower)."""
    beyond_others: float
    """median_slowdown / the other primitives' median slowdown."""
    p_value: float
    """One-sided rank test: its log slowdowns larger than the others'."""
    q_value: float
    """Benjamini-Hochberg across the primitives tested (= p_value with fdr off)."""
    regressed: bool

    def describe(self) -> str:
        return (
            f"{self.primitive} ({self.rows} rows, median {signed(self.median_slowdown)}, "
            f"{signed(self.beyond_others)} beyond the other primitives, "
            f"p={self.p_value:.2g}, q={self.q_value:.2g})"
        )


def signed(ratio: float) -> str:
    return f"{(ratio - 1) * 100:+.0f} %"


def judge_primitives(
    rows: dict[str, list[tuple[float, float]]], alpha: float, min_effect: float, fdr: bool
) -> list[PrimitiveVerdict]:
    """rows: primitive -> (slowdown, scale) of each of its rows: current/baseline in time terms
    (> 1: slower) and the row's expected spread as a factor (its threshold, 1 + T; the rank
    test compares log(slowdown) / log(scale), so a quiet row's 25 % counts for more than a
    noisy one's). Only primitives with MIN_ROWS rows, against MIN_ROWS of the others, vote."""
    logs = {
        name: [
            (math.log(s), math.log(c)) for s, c in values if s > 0 and math.isfinite(s) and c > 1
        ]
        for name, values in rows.items()
    }
    tested = []
    for name, own in logs.items():
        rest = [x for other, values in logs.items() if other != name for x in values]
        if len(own) >= MIN_ROWS and len(rest) >= MIN_ROWS:
            p = rank_test([x / c for x, c in rest], [x / c for x, c in own]).p_value
            mine = statistics.median(x for x, _c in own)
            beyond = math.exp(mine - statistics.median(x for x, _c in rest))
            tested.append((name, len(own), math.exp(mine), beyond, p))
    q_values = bh_adjust([t[4] for t in tested]) if fdr else [t[4] for t in tested]
    return [
        PrimitiveVerdict(name, rows, own, beyond, p, q, q <= alpha and beyond >= 1 + min_effect)
        for (name, rows, own, beyond, p), q in zip(tested, q_values, strict=True)
    ]


def primitive_lines(verdicts: list[PrimitiveVerdict], min_effect: float) -> list[str]:
    """The verdict's lines: each regressed primitive, or that none was."""
    if not verdicts:
        return []
    hits = [v for v in verdicts if v.regressed]
    if hits:
        return [f"regressed: {v.describe()}" for v in hits]
    worst = max(verdicts, key=lambda v: v.beyond_others)
    return [
        f"primitives: none slower than the others by >= {min_effect:.0%} with q <= alpha "
        f"({len(verdicts)} tested; most: {worst.describe()})"
    ]
