"""Match two sides' rows and judge them with the statistical core (distbench.stats.engine).

Each matched row becomes one RowInput: its value in every launch of each side, in log time terms
(a bandwidth's log negated: larger is slower), with the launch's own within-launch variance from
its trial units, and the row's threshold floor. A row of the baseline missing tonight is
only-baseline (it fails the gate unless --allow-missing); a row new tonight is only-current; a
column whose meaning changed between the runs' schema versions is definition-changed, and the
launches on the other side of the change are left out of that row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from distbench.collectors.migrations import changed_meaning
from distbench.parse import format_asked_size
from distbench.reports.compare.checks import Metric, Thresholds
from distbench.reports.compare.sides import Side, set_apart
from distbench.reports.runs import Row
from distbench.stats.components import LaunchValue, Prior, seeded_within_variances
from distbench.stats.defaults import default_prior, statistic_family
from distbench.stats.engine import Outcome, RowInput, Settings, judge_family, size_band
from distbench.stats.verdict import REGRESSED, Judged

ONLY_BASELINE, ONLY_CURRENT = "only-baseline", "only-current"
CHANGED, SKIPPED = "definition-changed", "not-compared"
UNMATCHED = (ONLY_BASELINE, ONLY_CURRENT, CHANGED, SKIPPED)
"""Outcomes of rows that were not judged, beside distbench.stats.verdict.STATES."""

EXIT_OK, EXIT_REGRESSED, EXIT_MISSING, EXIT_BOX = 0, 1, 4, 5
"""0 pass; 1 a row or band regressed; 4 no regression, but rows of the baseline are missing;
5 none of those, and the night cannot tell: the box changed under the window (stats/box.py)."""

STATISTICS: dict[str, Callable[..., np.ndarray]] = {
    "min": np.min,
    "p50": np.median,
    "mean": np.mean,
    "tail": np.max,
}
"""The statistic of a launch's trial units that its metric is (within_variance)."""

Key = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Unmatched:
    """A row that was not judged, and why."""

    key: dict[str, str]
    column: str
    value: float | None
    outcome: str
    reason: str


@dataclass
class Comparison:
    baseline: Side
    current: Side
    metric: Metric
    settings: Settings
    thresholds: Thresholds
    outcome: Outcome
    values: list[tuple[float, float]]
    """Per judged row: each side's level (geometric, by night: geometric), in the metric's own
    unit and direction."""
    columns: list[str]
    """Per judged row: the results.csv column compared."""
    unmatched: list[Unmatched] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    allow_missing: bool = False
    inputs: list[RowInput] = field(default_factory=list)
    """What was judged, per row (outcome.rows' order): report judges them once more without the
    relative contrast for its raw speedups' intervals (reports/report/verdicts.py)."""
    fallback: Prior | None = None
    """The prior of rows without a default of their own (judge_family's fallback)."""
    sizes: list[str] = field(default_factory=list)
    """Per judged row: its size as asked for (`64K`, where 3 ranks measure 65520 bytes), as
    report and history name it; the key keeps the measured size_bytes."""

    def regressions(self) -> list[Judged]:
        return [j for j in (*self.outcome.rows, *self.outcome.bands) if j.state == REGRESSED]

    @property
    def regressed(self) -> bool:
        return bool(self.regressions())

    @property
    def missing(self) -> list[Unmatched]:
        return [u for u in self.unmatched if u.outcome == ONLY_BASELINE]

    @property
    def exit_code(self) -> int:
        if self.regressed:
            return EXIT_REGRESSED
        if self.missing and not self.allow_missing:
            return EXIT_MISSING
        return EXIT_BOX if self.outcome.box else EXIT_OK

    def status(self) -> str:
        if self.regressed:
            return "REGRESSION"
        if self.missing and not self.allow_missing:
            return "FAILED: rows missing"
        return "CANNOT TELL: the box changed" if self.outcome.box else "pass"


def launch_value(
    row: Row, column: str, metric: Metric, launch: str, night: str
) -> LaunchValue | None:
    """The row's value in one launch, its within part still unknown (nan: with_within)."""
    value = row.metric(column)
    if value is None or not value > 0 or not math.isfinite(value):
        return None
    y = -math.log(value) if metric.higher_is_better else math.log(value)
    return LaunchValue(y, math.nan, launch, night)


def with_within(
    pending: list[tuple[list[LaunchValue], list[tuple[float, ...]], str, int]],
) -> list[list[LaunchValue]]:
    """Each (values, their rows' trial units, column, seed) with the values' within parts:
    components.within_variance of the units, the row's statistic and seed, all at once."""
    requests = [
        (units, STATISTICS[statistic_family(column)], seed)
        for _values, unit_lists, column, seed in pending
        for units in unit_lists
        if units
    ]
    withins = iter(seeded_within_variances(requests))
    return [
        [replace(v, within=next(withins)) if units else v
         for v, units in zip(values, unit_lists, strict=True)]
        for values, unit_lists, _column, _seed in pending
    ]  # fmt: skip


def asked_text(values: Mapping[str, object]) -> str:
    """A row's size as asked for (parse.asked_size), `64K`; '' for a row without a size."""
    size = str(values.get("size_bytes", ""))
    if not size.isdigit():
        return ""
    return format_asked_size(size, values.get("requested_bytes"))


def side_rows(side: Side) -> dict[Key, list[tuple[str, str, Row]]]:
    """key -> (launch, night, row) for every launch of the side that holds the row."""
    found: dict[Key, list[tuple[str, str, Row]]] = {}
    for launch in side.launches:
        for key, row in launch.run.rows.items():
            found.setdefault(key, []).append((launch.name, launch.night, row))
    return found


def floor_of(thresholds: Thresholds, row: Row, base_value: float, metric: Metric) -> float:
    """The row's threshold as a share of its baseline value (an absolute amount divided by it)."""
    threshold = thresholds.for_row(row.values)
    if threshold.percent:
        return threshold.value / 100
    return threshold.value / abs(base_value) if base_value else math.inf


def geometric(values: list[LaunchValue], metric: Metric) -> float:
    """A side's level in the metric's unit: the mean of its nights' mean logs, which a change is
    measured from (stats/nested.py; a mean over launches weighed a night of 3 launches 3 times)."""
    nights: dict[str, list[float]] = {}
    for value in values:
        nights.setdefault(value.night, []).append(value.y)
    mean = float(np.mean([np.mean(ys) for ys in nights.values()]))
    return math.exp(-mean) if metric.higher_is_better else math.exp(mean)


def compare_sides(
    baseline: Side, current: Side, metric: Metric, thresholds: Thresholds, settings: Settings,
    allow_missing: bool = False,
) -> Comparison:  # fmt: skip
    """Every row of both sides matched and judged (module docstring)."""
    baseline = set_apart(baseline, current)  # a night is not judged against itself
    base_rows, cur_rows = side_rows(baseline), side_rows(current)
    newest = set(baseline.last.rows) if baseline.launches else set()
    inputs: list[RowInput] = []
    values: list[tuple[float, float]] = []
    columns: list[str] = []
    sizes: list[str] = []
    unmatched: list[Unmatched] = []
    pending: list[tuple[Key, Row, str, int, list[tuple[LaunchValue, tuple[float, ...]]], int]] = []
    for seed, (key, found) in enumerate(base_rows.items()):
        sample = found[-1][2]
        column = metric.column(sample.kind)
        if column is None:
            reason = f"{metric.name} does not exist for {sample.kind} rows"
            unmatched.append(Unmatched(dict(key), "", None, SKIPPED, reason))
            continue
        if key not in cur_rows:
            if key in newest:
                unmatched.append(
                    Unmatched(
                        dict(key),
                        column,
                        sample.metric(column),
                        ONLY_BASELINE,
                        "not in the current run",
                    )
                )
            continue
        version = cur_rows[key][-1][2].schema_version
        kept = [
            f
            for f in found
            if changed_meaning(sample.kind, column, f[2].schema_version, version) is None
        ]
        if not kept:
            unmatched.append(
                Unmatched(
                    dict(key),
                    column,
                    None,
                    CHANGED,
                    f"{column} changed meaning after schema v{sample.schema_version}",
                )
            )
            continue
        base = [
            (v, row.units_us)
            for launch, night, row in kept
            if (v := launch_value(row, column, metric, launch, night))
        ]
        cur = [(v, row.units_us) for launch, night, row in cur_rows[key]
               if (v := launch_value(row, column, metric, launch, night))]  # fmt: skip
        if not base or not cur:
            unmatched.append(
                Unmatched(
                    dict(key),
                    column,
                    None,
                    SKIPPED,
                    f"{column} is empty on {'the baseline' if not base else 'the current'} side",
                )
            )
            continue
        pending.append((key, sample, column, len(base), [*base, *cur], seed))
    measured = with_within(
        [([v for v, _u in both], [u for _v, u in both], column, seed)
         for _key, _sample, column, _n, both, seed in pending]
    )  # fmt: skip
    for (key, sample, column, n_base, _both, _seed), found_values in zip(
        pending, measured, strict=True
    ):
        on_base, on_cur = found_values[:n_base], found_values[n_base:]
        base_value = geometric(on_base, metric)
        floor = floor_of(thresholds, sample, base_value, metric)
        within = [v.within for v in (*on_base, *on_cur) if math.isfinite(v.within)]
        default = default_prior(
            column, size_band(dict(key)), float(np.mean(within)) if within else math.nan
        )
        inputs.append(RowInput(dict(key), tuple(on_base), tuple(on_cur), floor, default))
        values.append((base_value, geometric(on_cur, metric)))
        columns.append(column)
        sizes.append(asked_text(sample.values))
    for key, found in cur_rows.items():
        if key not in base_rows:
            sample = found[-1][2]
            column = metric.column(sample.kind) or ""
            unmatched.append(
                Unmatched(
                    dict(key),
                    column,
                    sample.metric(column) if column else None,
                    ONLY_CURRENT,
                    "not in the baseline",
                )
            )
    fallback = default_prior(metric.comm_column or metric.name, "mid", math.nan)
    outcome = judge_family(inputs, settings, fallback)
    notes = [*baseline.notes, *current.notes]
    return Comparison(
        baseline,
        current,
        metric,
        settings,
        thresholds,
        outcome,
        values,
        columns,
        unmatched,
        notes,
        allow_missing,
        inputs,
        fallback,
        sizes,
    )
