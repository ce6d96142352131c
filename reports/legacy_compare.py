"""`distbench compare BASELINE CURRENT`: match the rows of two runs, and say for each whether it
regressed, improved, stayed the same, or changed by less than its noise; the gate's verdict.

The decision rule (GateRule; defaults measured by ci/bench_gate.py, see docs):
  1. the metric got worse by more than the row's threshold (direction-aware: time up, bandwidth
     down), and
  2. the row's independent samples say so too: a one-sided exact rank test (reports/noise.py) of
     the current run's trials (DDP: windows) against the baseline's gives p <= alpha, after
     Benjamini-Hochberg across the compared rows when `fdr` is on, and
  3. with `adjacent`, a neighbouring size of the same case passes 1 and 2 as well: one size alone
     is `unconfirmed` (a preempted trial hits one size; a slower primitive hits its every size).
  4. apart from the rows: with `by_primitive`, a primitive whose rows are slower than the other
     primitives' rows (rank test on the log ratios, BH across primitives, a median beyond the
     others' of at least `min_effect`) regresses as a whole (reports/primitive_rule.py).
A row with fewer than `min_samples` units on a side, or whose sizes cannot reach alpha at all, is
judged by its threshold alone and says so. Rows of the baseline missing from the current run fail
the gate (EXIT_MISSING) unless `allow_missing`. A column whose meaning changed between the two
runs' schema versions is `definition-changed` and never compared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from distbench.collectors.migrations import changed_meaning
from distbench.collectors.schema import COMM_MATCH_KEY, DDP_CASE_COLUMNS
from distbench.parse import UsageError
from distbench.reports.checks import Metric
from distbench.reports.noise import null_level, rank_test
from distbench.reports.primitive_rule import PrimitiveVerdict, judge_primitives
from distbench.reports.rule import (
    CHANGED,
    EXIT_MISSING,
    EXIT_OK,
    EXIT_REGRESSED,
    IMPROVED,
    NOISE,
    ONLY_BASELINE,
    ONLY_CURRENT,
    REGRESSED,
    SKIPPED,
    UNCHANGED,
    UNCONFIRMED,
    VERDICTS,
    GateRule,
    RowVerdict,
    decide,
)
from distbench.reports.runs import Row, Run

__all__ = [
    "CHANGED", "EXIT_MISSING", "EXIT_OK", "EXIT_REGRESSED", "IMPROVED", "NOISE", "ONLY_BASELINE",
    "ONLY_CURRENT", "REGRESSED", "SKIPPED", "UNCHANGED", "UNCONFIRMED", "VERDICTS", "Comparison",
    "GateRule", "RowVerdict", "compare_runs", "judge",
]  # fmt: skip


@dataclass(frozen=True)
class Comparison:
    baseline: str
    current: str
    metric: str
    rule: GateRule
    rows: list[RowVerdict]
    notes: list[str] = field(default_factory=list)
    """Remarks on the whole comparison (different hosts, torch versions, repeated rows)."""
    primitives: list[PrimitiveVerdict] = field(default_factory=list)
    """Each primitive's rows against the others' (rule.by_primitive; primitive_rule.py)."""

    def count(self, verdict: str) -> int:
        return sum(1 for row in self.rows if row.verdict == verdict)

    def of(self, verdict: str) -> list[RowVerdict]:
        return [row for row in self.rows if row.verdict == verdict]

    @property
    def regressed(self) -> bool:
        return self.count(REGRESSED) > 0 or any(p.regressed for p in self.primitives)

    @property
    def missing(self) -> int:
        return self.count(ONLY_BASELINE)

    @property
    def exit_code(self) -> int:
        if self.regressed:
            return EXIT_REGRESSED
        return EXIT_MISSING if self.missing and not self.rule.allow_missing else EXIT_OK

    @property
    def chance(self) -> float:
        """False alarms that chance alone gives on unchanged code, rank test alone, no BH."""
        return math.fsum(row.chance for row in self.rows)

    @property
    def tested(self) -> int:
        return sum(1 for row in self.rows if row.p_value is not None)

    def status(self) -> str:
        if self.regressed:
            return "REGRESSION"
        if self.missing and not self.rule.allow_missing:
            return "FAILED: rows missing"
        return "pass"

    def counts(self) -> str:
        parts = [f"{self.count(v)} {v}" for v in VERDICTS if self.count(v)]
        return ", ".join(parts) if parts else "no rows"


def row_units(base: Row, cur: Row) -> str:
    unit = cur.unit if cur.unit == base.unit else f"{base.unit}/{cur.unit}"
    plural = unit if " " in unit else f"{unit}s"  # a reason ("v1 DDP samples are ..."), not a noun
    return f"{len(base.units_us)} vs {len(cur.units_us)} {plural}"


def judge(baseline: Row, current: Row, metric: Metric, rule: GateRule) -> RowVerdict:
    """The first look at one matched row: its change and its rank test; `decide` then sets the
    verdicts that need every row (BH, adjacent sizes)."""
    key = dict(baseline.key)
    threshold = rule.thresholds.for_row(baseline.values)
    column = metric.column(baseline.kind)
    if column is None:
        why = f"{metric.name} does not exist for {baseline.kind} rows"
        return RowVerdict(key, "", None, None, None, None, str(threshold), None, SKIPPED, why)
    versions = (baseline.schema_version, current.schema_version)
    if (changed := changed_meaning(baseline.kind, column, *versions)) is not None:
        return RowVerdict(
            key, column, baseline.metric(column), current.metric(column), None, None,
            str(threshold), None, CHANGED, f"definition changed in v{changed}",
            f"{column}: baseline v{versions[0]}, current v{versions[1]}: not like with like",
        )  # fmt: skip
    base, cur = baseline.metric(column), current.metric(column)
    if base is None or cur is None:
        why = f"{column} is empty in {'the baseline' if base is None else 'the current run'}"
        return RowVerdict(key, column, base, cur, None, None, str(threshold), None, SKIPPED, why)
    ratio = cur / base if base != 0 else (1.0 if cur == 0 else math.inf)
    worse = threshold.worse_by(base, cur, metric)
    units = row_units(baseline, current)
    reason, note, p_value, chance = "", "", None, 0.0
    # Units are always times (op or step), whatever the metric: slower = worse.
    fewest = min(len(baseline.units_us), len(current.units_us))
    if not rule.noise_test:
        reason = "noise test off: threshold only"
    elif fewest == 0:
        why = baseline.unit if not baseline.units_us else current.unit
        reason = f"no independent samples ({why}): threshold only"
    elif fewest < rule.min_samples:
        reason = f"fewer than --min-samples {rule.min_samples} samples: threshold only"
        note = units
    elif worse != 0:
        slower, faster = (current, baseline) if worse > 0 else (baseline, current)
        test = rank_test(faster.units_us, slower.units_us)
        chance = null_level(faster.units_us, slower.units_us, rule.alpha)
        if test.min_p_value > rule.alpha:
            reason = f"the rank test cannot reach alpha {rule.alpha:g} here: threshold only"
            note = f"{units}, smallest p {test.min_p_value:.3g}"
        else:
            p_value = test.p_value
    past = abs(worse) > threshold.value
    verdict = UNCHANGED if not past else REGRESSED if worse > 0 else IMPROVED
    return RowVerdict(
        key, column, base, cur, ratio, worse, str(threshold), p_value, verdict, reason, note,
        None, units, chance,
    )  # fmt: skip


def describe_run(run: Run) -> str:
    m = run.manifest
    bits = [
        f"host={m.get('host', '?')}",
        f"torch={m.get('torch', '?')}",
        f"git={str(m.get('distbench_git_sha') or '?')[:10]}",
        f"started={m.get('started_utc', '?')}",
        f"schema=v{run.schema_version}",
    ]
    return f"{run.path}  " + " ".join(bits)


def compare_runs(baseline: Run, current: Run, metric: Metric, rule: GateRule) -> Comparison:
    """Match rows by what they measured and judge each; UsageError when nothing matches."""
    common = [k for k in baseline.rows if k in current.rows]
    if not common:
        raise UsageError(
            f"{baseline.path} and {current.path} have no row in common (rows match on "
            f"{', '.join(COMM_MATCH_KEY)}; DDP rows on {', '.join(DDP_CASE_COLUMNS)}): compare "
            "runs of the same sweep"
        )
    rows: list[RowVerdict] = []
    for key, base_row in baseline.rows.items():
        if key in current.rows:
            rows.append(judge(base_row, current.rows[key], metric, rule))
        else:
            rows.append(_one_sided(base_row, ONLY_BASELINE, metric, "not in the current run"))
    for key, cur_row in current.rows.items():
        if key not in baseline.rows:
            rows.append(_one_sided(cur_row, ONLY_CURRENT, metric, "not in the baseline"))
    if all(row.verdict in (SKIPPED, ONLY_BASELINE, ONLY_CURRENT) for row in rows):
        kinds = sorted({baseline.rows[k].kind for k in common})
        raise UsageError(
            f"--metric {metric.name} does not exist for {' or '.join(kinds)} rows: "
            "choose time_us_p50, busbw_GBps or samples_per_s (DDP)"
        )
    notes = []
    for name in ("host", "torch", "cuda", "nccl", "gpus"):
        a, b = baseline.manifest.get(name), current.manifest.get(name)
        if a != b and (a is not None or b is not None):
            notes.append(f"{name} differs: baseline {a}, current {b}")
    for run, which in ((baseline, "baseline"), (current, "current run")):
        if run.duplicates:
            runs = ", ".join(run.duplicate_runs)
            notes.append(
                f"the {which} repeats {run.duplicates} row(s) across {runs} (by start time): "
                "each is taken from the run that started last"
            )
    verdicts = decide(rows, rule)
    primitives = []
    if rule.by_primitive and (orders := trial_orders(baseline, current)) == {"interleaved"}:
        primitives = judge_primitives(
            slowdowns(verdicts, metric), rule.alpha, rule.min_effect, rule.fdr
        )
    elif rule.by_primitive and "comm" in {row.kind for row in baseline.rows.values()}:
        notes.append(
            f"per-primitive test off: trial order {'/'.join(sorted(orders))}, not interleaved on "
            "both sides (sequential rows of one primitive move together between launches, so "
            "its rows are not exchangeable with the others': --order interleaved)"
        )
    return Comparison(
        describe_run(baseline), describe_run(current), metric.name, rule, verdicts, notes,
        primitives,
    )  # fmt: skip


def trial_orders(baseline: Run, current: Run) -> set[str]:
    """The trial orders of every communication row of both runs (pre-v3 rows: sequential)."""
    return {
        row.values.get("trial_order") or "sequential"
        for run in (baseline, current)
        for row in run.rows.values()
        if row.kind == "comm"
    }


def slowdowns(rows: list[RowVerdict], metric: Metric) -> dict[str, list[tuple[float, float]]]:
    """primitive -> (current/baseline in time terms, 1 + the row's threshold) of its compared
    communication rows; an absolute threshold gives every row the same scale."""
    found: dict[str, list[tuple[float, float]]] = {}
    for row in rows:
        if row.ratio is None or row.key.get("kind") == "ddp" or row.ratio <= 0:
            continue
        ratio = 1 / row.ratio if metric.higher_is_better else row.ratio
        percent = row.threshold.endswith("%") and float(row.threshold[:-1]) > 0
        scale = 1 + float(row.threshold[:-1]) / 100 if percent else math.e
        found.setdefault(row.key.get("primitive", ""), []).append((ratio, scale))
    return found


def _one_sided(row: Row, verdict: str, metric: Metric, why: str) -> RowVerdict:
    column = metric.column(row.kind) or ""
    value = row.metric(column) if column else None
    base, cur = (value, None) if verdict == ONLY_BASELINE else (None, value)
    return RowVerdict(dict(row.key), column, base, cur, None, None, "", None, verdict, why)
