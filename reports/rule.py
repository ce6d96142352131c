"""compare's decision rule: the verdicts, the rule's settings (GateRule) and the verdicts that
need every row of a comparison at once (Benjamini-Hochberg across the rows, adjacent sizes).

Why each lever (ci/bench_gate.py measures them on real launches; the docs hold the table):
- the rank test votes only on independent samples (trials; DDP windows), and only with at least
  `min_samples` of them per side: 3 vs 3 can never reach p < 0.05, and its "significant" rows
  are single orderings;
- Benjamini-Hochberg: a sweep compares ~100 rows, and 100 tests at p <= 0.05 give ~5 false alarms
  on unchanged code; BH keeps the false discovery rate at alpha instead;
- adjacent sizes: a preempted trial slows one size, a slower primitive slows all of them;
- thresholds from the measured spread between launches (a thresholds file): trials of one launch
  share its placement and the box's load, so the rank test cannot see night-to-night spread.
- per primitive (primitive_rule.py): a slower primitive slows every one of its rows, so its rows
  vote together against the other primitives' rows, which cancels a shift of the whole run.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from distbench.parse import UsageError
from distbench.reports.checks import Thresholds
from distbench.reports.noise import bh_adjust

REGRESSED, IMPROVED, UNCHANGED, NOISE = "regressed", "improved", "unchanged", "within-noise"
UNCONFIRMED, CHANGED = "unconfirmed", "definition-changed"
ONLY_BASELINE, ONLY_CURRENT, SKIPPED = "only-baseline", "only-current", "not-compared"
VERDICTS = (
    REGRESSED, ONLY_BASELINE, UNCONFIRMED, IMPROVED, NOISE, UNCHANGED, CHANGED, ONLY_CURRENT,
    SKIPPED,
)  # fmt: skip

EXIT_OK, EXIT_REGRESSED, EXIT_MISSING = 0, 1, 4
"""0 pass; 1 a row regressed; 4 no regression, but rows of the baseline are missing (2: usage)."""


@dataclass(frozen=True)
class GateRule:
    """How compare decides. The defaults are the shipped gate. Measured on a shared 2-core box
    (docs/compare-and-ci.md, ci/bench_gate.py, 12 interleaved launches of the nightly matrix):
    with the measured thresholds and two launches a night pooled (reports/launches.py), 2.4 %
    of replayed unchanged nights failed and 96.8 % of nights with one primitive 25 % slower
    failed naming it (one launch a night: 6.6 %, 92.2 %); on a quiet node's noise model, 10 %
    slowdowns are caught."""

    thresholds: Thresholds
    """Per-row threshold: the first matching rule of a thresholds file, else --threshold."""
    alpha: float = 0.05
    """Significance of the rank test (of the BH q-value when fdr is on)."""
    noise_test: bool = True
    """False: the threshold alone decides every row."""
    fdr: bool = True
    """Benjamini-Hochberg across the tested rows of this comparison."""
    min_samples: int = 5
    """Independent units per side below which the rank test does not vote (threshold only)."""
    adjacent: bool = True
    """A regression must show at two adjacent sizes of one case (rows without sizes stand alone)."""
    allow_missing: bool = False
    """True: rows of the baseline missing from the current run do not fail the gate."""
    by_primitive: bool = True
    """Also test each primitive's rows against the other primitives' (reports/primitive_rule.py):
    a primitive slower than the rest fails the gate, naming it."""
    min_effect: float = 0.15
    """The per-primitive test's minimum effect: its median slowdown beyond the others' median
    (ci/bench_gate.py, two launches a night on the shared box: 10 % let 6.2 % of unchanged
    nights fail, 15 % 2.4 %; 20 % caught 88 % of 25 % slowdowns, 15 % 97 %)."""

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise UsageError(f"--alpha {self.alpha} must be between 0 and 1, e.g. 0.05")
        if self.min_samples < 1:
            raise UsageError(f"--min-samples {self.min_samples} must be at least 1, e.g. 5")
        if not 0 <= self.min_effect < 10:
            raise UsageError(f"min_effect {self.min_effect} must be a share, e.g. 0.10 (10 %)")


@dataclass(frozen=True)
class RowVerdict:
    """One compared row."""

    key: dict[str, str]
    """What was measured: kind, primitive, backend, world_size, dtype, size_bytes, mode, ..."""
    column: str
    """The results.csv column compared (time_us_p50, step_time_us_p50, busbw_GBps, ...)."""
    baseline: float | None
    current: float | None
    ratio: float | None
    """current / baseline."""
    worse_by: float | None
    """How much worse current is, in the threshold's terms (percent or absolute); < 0: better."""
    threshold: str
    p_value: float | None
    """One-sided rank-test p-value in the direction of the change; None when not tested."""
    verdict: str
    reason: str = ""
    """Why, in words shared by every row of its kind (notes are grouped by it)."""
    note: str = ""
    """This row's own detail (its p-value, its sample counts)."""
    q_value: float | None = None
    """Benjamini-Hochberg q-value when fdr is on."""
    units: str = ""
    """The independent samples tested, e.g. '10 vs 10 trials'."""
    chance: float = 0.0
    """P(rank test fires | nothing changed) for this row's sizes and ties; 0 when untested."""


def decide(rows: list[RowVerdict], rule: GateRule) -> list[RowVerdict]:
    """The verdicts that need every row: the rank test's vote (after BH across the tested rows)
    on rows past their threshold, then the adjacent-size confirmation of regressions."""
    tested = [i for i, row in enumerate(rows) if row.p_value is not None]
    if rule.fdr:
        q_values = bh_adjust([rows[i].p_value or 1.0 for i in tested])
        for i, q in zip(tested, q_values, strict=True):
            rows[i] = replace(rows[i], q_value=q)
    for i in tested:
        row = rows[i]
        score = row.q_value if rule.fdr else row.p_value
        if row.verdict in (REGRESSED, IMPROVED) and score is not None and score > rule.alpha:
            what = "q" if rule.fdr else "p"
            rows[i] = replace(
                row, verdict=NOISE, reason="past the threshold, but the samples overlap",
                note=f"{what}={score:.3g} > {rule.alpha:g} ({row.units})",
            )  # fmt: skip
    if rule.adjacent:
        confirm_adjacent(rows)
    return rows


def case_of(row: RowVerdict) -> tuple[tuple[str, str], ...]:
    return tuple((k, v) for k, v in row.key.items() if k != "size_bytes")


def confirm_adjacent(rows: list[RowVerdict]) -> None:
    """A regression stands when a neighbouring size of its case regressed too, or when its case
    was compared at one size only; else it is unconfirmed."""
    sizes: dict[tuple[tuple[str, str], ...], list[tuple[int, int]]] = {}
    for i, row in enumerate(rows):
        if row.key.get("size_bytes", "").isdigit() and row.worse_by is not None:
            sizes.setdefault(case_of(row), []).append((int(row.key["size_bytes"]), i))
    for members in sizes.values():
        members.sort()
        hit = [rows[i].verdict == REGRESSED for _size, i in members]
        for position, (_size, i) in enumerate(members):
            if not hit[position] or len(members) == 1:
                continue
            neighbours = hit[max(0, position - 1) : position] + hit[position + 1 : position + 2]
            if not any(neighbours):
                rows[i] = replace(
                    rows[i], verdict=UNCONFIRMED,
                    reason="regressed at one size only, not at a neighbouring size",
                )  # fmt: skip
