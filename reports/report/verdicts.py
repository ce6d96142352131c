"""The report's verdicts: every source against the baseline (the first source), judged by compare
itself (reports/compare/judge.py `compare_sides` with compare's defaults, CompareOptions() of
reports/compare/options.py: time_us_p50, a 5 % threshold, the core's default settings), so that
report and compare give the same state on every row they share.

Each matched row of the report (speedups.comm_ratios, ddp_ratios) gets, from its source's
comparison:

- state: regressed, improved, no change seen or cannot tell (distbench.stats.verdict), compare's
  own. Across sources the direction reads as slower (regressed) or faster (improved): the source
  is compare's current side, the baseline its baseline;
- speedup: 1 / the time ratio, the baseline's p50 over this source's, each the geometric mean
  over its side's launches, and its 95 % interval (low, high): the core's t interval of the shift
  with the launch as the unit (beside a verdict, regressed or improved, at compare's level for
  the verdicts, Judged.level: 1 - R alpha / m, Benjamini and Yekutieli's). Its variance holds
  the spread between launches: measured from the
  sides' launches and squeezed towards the prior of similar rows, or, while the noise is learnt
  (fewer than 5 nights on the baseline side), the stated default spread of distbench.stats
  .defaults. One launch a side leaves the cluster and the launch confounded: only that assumed
  spread separates them;
- beyond, beyond_low, beyond_high: with rows of two or more primitives compare judges each
  primitive beyond the rest of the run (the engine's relative mode), so the state was decided on
  this speedup, with the launch's common level taken out. The raw speedup's interval comes from
  the same launch values judged once more without that contrast;
- detectable: the smallest slowdown (a share) this comparison would have caught in the row with
  80 % power, at the level the row is tested at.

    verdicts = judge_sources(source_sides(loaded))
    ratios = annotate(sp.comm_ratios(loaded.comm), "comm", verdicts)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from distbench.parse import UsageError
from distbench.reports.compare.checks import Metric
from distbench.reports.compare.judge import Comparison, Unmatched, compare_sides
from distbench.reports.compare.options import CompareOptions
from distbench.reports.compare.sides import Side
from distbench.reports.kinds import MATCH_KEYS
from distbench.reports.load import Loaded
from distbench.reports.report.sides import source_sides
from distbench.reports.report.uncertainty import TIMES
from distbench.stats.engine import WHOLE_RUN, Outcome, judge_family
from distbench.stats.verdict import (
    CANNOT_TELL,
    IMPROVED,
    REGRESSED,
    Judged,
    describe_state,
)

COMPARE = CompareOptions()
"""compare's defaults (reports/compare/options.py): the report judges as `distbench compare A B`."""
DIRECTION = {REGRESSED: "slower", IMPROVED: "faster"}
"""How a state reads across sources: the source is compare's current side."""
NOT_JUDGED = "not compared"

Key = tuple[tuple[str, str], ...]


@dataclass
class SourceVerdict:
    """One source against the baseline."""

    source: str
    comparison: Comparison
    """compare's own comparison (relative where compare is)."""
    raw: Outcome
    """The same launch values judged without the relative contrast (comparison.outcome itself
    when it is absolute): the raw speedups' intervals."""
    index: dict[Key, int] = field(default_factory=dict)
    """A row's key -> its position in both outcomes' rows."""
    unmatched: dict[Key, Unmatched] = field(default_factory=dict)
    """A row compare did not judge -> why."""
    by_rows: list[dict[tuple[int, ...], Judged]] = field(default_factory=list)
    """Each hypothesis of the verdict's and of the raw outcome by its rows (positions)."""

    def __post_init__(self) -> None:
        self.index = {j.hypothesis.band: i for i, j in enumerate(self.comparison.outcome.rows)}
        self.unmatched = {tuple(u.key.items()): u for u in self.comparison.unmatched}
        self.by_rows = [{}, {}]
        for found, outcome in zip(self.by_rows, (self.comparison.outcome, self.raw), strict=True):
            for judged in (*outcome.rows, *outcome.bands):
                if judged.hypothesis.primitive != WHOLE_RUN:
                    found.setdefault(judged.hypothesis.members, judged)

    @property
    def relative(self) -> bool:
        return self.comparison.outcome.relative

    def whole(self) -> tuple[Judged | None, Judged | None]:
        """(the verdict, the raw estimate) of every row together: the whole-run hypothesis in
        relative mode; a single primitive's every-row band otherwise."""
        if self.relative:
            bands = self.comparison.outcome.bands
            found = [j for j in bands if j.hypothesis.primitive == WHOLE_RUN]
            return (found[0] if found else None), None
        return self.band(range(len(self.comparison.outcome.rows)))

    def band(self, members: Any) -> tuple[Judged | None, Judged | None]:
        """(verdict, raw) of the hypothesis whose rows are exactly `members` (row positions);
        Nones when the family declares none."""
        wanted = tuple(sorted(set(members)))
        return self.by_rows[0].get(wanted), self.by_rows[1].get(wanted)

    def launches(self) -> tuple[int, int]:
        """Launches on the baseline's side and on this source's."""
        return len(self.comparison.baseline.launches), len(self.comparison.current.launches)


def report_verdicts(
    loaded: Loaded, notes: list[str], metric: Metric = COMPARE.chosen_metric
) -> dict[str, SourceVerdict]:
    """judge_sources of the report's sources (reports/report/sides.py) on `metric`; a side
    compare cannot read leaves the comparison without verdicts and says why in `notes`."""
    try:
        verdicts = judge_sources(source_sides(loaded), metric)
    except UsageError as error:
        notes.append(f"runs compared: no verdicts, compare cannot read a side: {error}")
        return {}
    for verdict in verdicts.values():
        notes += [n for n in verdict.comparison.notes if n not in notes and not said(n, notes)]
    return verdicts


def said(note: str, notes: list[str]) -> bool:
    """Whether compare's `PATH: one night of N launches (...)` is said already, by the report's
    own `PATH: N launches drawn as one run (...)` (launch_frames.py): one line a night."""
    path, _, rest = note.partition(": one night of ")
    count = rest.split(" ", 1)[0]
    return bool(rest) and any(
        n.startswith(f"{path}: {count} launches drawn as one run") for n in notes
    )


def judge_sources(
    sides: dict[str, Side], metric: Metric = COMPARE.chosen_metric
) -> dict[str, SourceVerdict]:
    """Every source but the first judged against the first (module docstring), on `metric`
    (compare's default, time_us_p50, unless report --metric says another time)."""
    names = list(sides)
    if len(names) < 2:
        return {}
    baseline = sides[names[0]]
    thresholds, settings = COMPARE.thresholds, COMPARE.settings()
    verdicts = {}
    for name in names[1:]:
        comparison = compare_sides(baseline, sides[name], metric, thresholds, settings)
        raw = comparison.outcome
        if raw.relative and comparison.fallback is not None:
            absolute = replace(comparison.settings, relative=False)
            raw = judge_family(comparison.inputs, absolute, comparison.fallback)
        verdicts[name] = SourceVerdict(name, comparison, raw)
    return verdicts


def cell_text(value: object) -> str:
    """A typed cell as results.csv spells it (reports/cells.py): integers without '.0', empty
    for a missing one."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return str(int(value))
    return str(value)


def row_keys(frame: pd.DataFrame, kind: str) -> list[Key]:
    """compare's key of every row of a report frame (reports/runs.py: kind, then MATCH_KEYS)."""
    columns = MATCH_KEYS[kind]
    cells = [[cell_text(v) for v in frame[c].tolist()] for c in columns]
    return [
        (("kind", kind), *zip(columns, values, strict=True)) for values in zip(*cells, strict=True)
    ]


def speedup_of(judged: Judged | None) -> tuple[float, float, float]:
    """1 / the time ratio and its interval (95 %, or a verdict's level), inverted (nans without
    a shift)."""
    if judged is None or judged.shift is None:
        return math.nan, math.nan, math.nan
    low, high = judged.shift.interval(judged.level)  # time ratios: 0 and inf where they run out
    return (
        1 / judged.shift.ratio if judged.shift.ratio > 0 else math.inf,
        1 / high if high > 0 else math.inf,
        1 / low if low > 0 else math.inf,
    )


def state_text(judged: Judged) -> str:
    """'improved (faster)', 'no change seen (would catch >= 18 %)', 'cannot tell: learning the
    noise: 1 of 5 nights': the state as compare prints it, with its direction across sources."""
    if judged.state in DIRECTION:
        return f"{judged.state} ({DIRECTION[judged.state]})"
    return describe_state(judged).replace("below 10x", f"below 10{TIMES}")  # as its speedups


VERDICT_COLUMNS = (
    "state", "verdict", "low", "high", "beyond", "beyond_low", "beyond_high", "detectable",
    "level", "beyond_level", "launches", "launches_base", "row_index",
)  # fmt: skip
"""`level` and `beyond_level`: the level of (low, high) and of the beyond interval (0.95, or
a verdict's: distbench.stats.verdict.selected_level)."""


def annotate(
    ratios: pd.DataFrame,
    kind: str,
    verdicts: dict[str, SourceVerdict],
    metric: Metric = COMPARE.chosen_metric,
) -> pd.DataFrame:
    """`ratios` (one row per source and matched case) with its comparison's verdict (module
    docstring); `{column}_base`, `{column}` and `speedup` become the geometric means over each
    side's launches that compare judged. A row compare did not judge keeps its values and gets
    compare's reason (`not compared: ...`)."""
    frame = ratios.reset_index(drop=True).copy()
    column = str(metric.column(kind))
    records: list[dict[str, Any]] = []
    for source, key in zip(frame["source"].astype(str), row_keys(frame, kind), strict=True):
        verdict = verdicts.get(source)
        records.append(row_verdict(verdict, key, column) if verdict else {})
    names = (*VERDICT_COLUMNS, column, f"{column}_base", "speedup")
    extra = pd.DataFrame.from_records(records, index=frame.index, columns=list(names))
    for name in names:
        kept = frame.get(name, None)
        frame[name] = extra[name].where(extra[name].notna(), kept)
    frame["state"] = frame["state"].fillna(NOT_JUDGED)
    frame["verdict"] = frame["verdict"].fillna(f"{NOT_JUDGED} (compare could not read a side)")
    frame["row_index"] = frame["row_index"].fillna(-1).astype(int)
    for name in (*VERDICT_COLUMNS[2:-3], column, f"{column}_base", "speedup"):
        frame[name] = frame[name].astype(float)
    return frame


def row_verdict(verdict: SourceVerdict, key: Key, column: str) -> dict[str, Any]:
    position = verdict.index.get(key)
    if position is None:
        found = verdict.unmatched.get(key)
        reason = f"{found.outcome}: {found.reason}" if found else "not in the comparison"
        return {"state": NOT_JUDGED, "verdict": f"{NOT_JUDGED} ({reason})", "row_index": -1}
    judged = verdict.comparison.outcome.rows[position]
    raw = verdict.raw.rows[position]
    speedup, low, high = speedup_of(raw)
    beyond = speedup_of(judged) if verdict.relative else (math.nan,) * 3
    base, value = verdict.comparison.values[position]
    shift = judged.shift
    return {
        "state": judged.state, "verdict": state_text(judged), "speedup": speedup,
        "low": low, "high": high, "beyond": beyond[0], "beyond_low": beyond[1],
        "beyond_high": beyond[2], "detectable": judged.detectable, "level": raw.level,
        "beyond_level": judged.level if verdict.relative else math.nan,
        "launches": shift.n_current if shift else 0, "launches_base": shift.n_base if shift else 0,
        "row_index": position, column: value, f"{column}_base": base,
    }  # fmt: skip


def counts(states: pd.Series) -> dict[str, int]:
    """Rows per state (and not compared), in the verdict's order."""
    order = (IMPROVED, REGRESSED, "no change seen", CANNOT_TELL, NOT_JUDGED)
    found = states.value_counts()
    return {state: int(found.get(state, 0)) for state in order if found.get(state, 0)}
