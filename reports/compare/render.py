"""A Comparison as a terminal table, Markdown (the CI job summary), JSON or JUnit XML (junit.py).
The verdict comes first (status, each regressed or improved band, what the comparison could
see), then how it was tested, every row, the notes, and the verdict once more as the last line."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from distbench.parse import format_size
from distbench.reports.compare.judge import ONLY_BASELINE, Comparison
from distbench.reports.compare.machine import machine_lines
from distbench.reports.compare.measured import settings_lines
from distbench.reports.compare.words import (
    band_name,
    family_line,
    headline_verdicts,
    noise_line,
    parts_line,
    relative_line,
    row_name,
    scope,
    seen_header,
    seen_lines,
    split_line,
    verdict_line,
)
from distbench.stats.verdict import (
    CANNOT_TELL,
    IMPROVED,
    REGRESSED,
    STATES,
    Judged,
    describe_state,
    level_text,
)
from distbench.tables import format_number, render_rows

JSON_VERSION = 2
"""compare --format json's layout, its top-level "version": raised when a key is removed or
renamed or its meaning changes; a new key does not raise it (docs/compare.md). 1: 0.2.0's
rank-test rows, which had no version key; 2: 0.3's launch-level verdicts."""
FIRST_MISSING = 5
METRIC_DIGITS = 4
NUMBER_COLUMNS = ("#", "size", "baseline", "current", "change", "beyond run", "interval", "q")
SHOWN_KEYS = ("primitive", "size_bytes", "dtype", "world_size", "pattern", "mode", "op",
              "strategy", "api", "placement", "env")  # fmt: skip


def counts(comparison: Comparison) -> str:
    """'3 regressed, 90 no change seen, 15 cannot tell' over the rows, then the bands' and the
    whole run's regressions and improvements ('band regressed: all_reduce >= 1M': the row
    counts do not hold them), and the missing rows."""
    found = {state: 0 for state in STATES}
    for judged in comparison.outcome.rows:
        found[judged.state] += 1
    parts = [f"{n} {state}" for state, n in found.items() if n]
    bands = [j for j in comparison.outcome.bands if j.state in (REGRESSED, IMPROVED)]
    for state in (REGRESSED, IMPROVED):
        named = [band_name(j) for j in bands if j.state == state]
        if named:
            more = f" and {len(named) - 2} more" if len(named) > 2 else ""
            bands_word = "band" if len(named) == 1 else "bands"
            parts.append(f"{bands_word} {state}: {'; '.join(named[:2])}{more}")
    parts += [f"{len(comparison.missing)} missing"] if comparison.missing else []
    return ", ".join(parts) or "no rows"


def headline(comparison: Comparison) -> str:
    """'distbench compare: STATUS (counts)'; a pass in which no row could be judged says so (a
    young window, one launch a side): the gate passes what it cannot see."""
    line = f"distbench compare: {comparison.status()} ({counts(comparison)})"
    judged = [*comparison.outcome.rows, *comparison.outcome.bands]
    if comparison.status() == "pass" and judged and all(j.state == CANNOT_TELL for j in judged):
        line += ": nothing judged yet, no row could be told from the noise"
    return line


def verdict_lines(comparison: Comparison) -> list[str]:
    lines = [verdict_line(comparison, j) for j in headline_verdicts(comparison)]
    if comparison.outcome.box:
        lines.insert(0, box_line(comparison.outcome.box))
    elif comparison.outcome.split:
        lines.append(split_line(comparison.outcome.split))
    if not lines:
        judged = [*comparison.outcome.rows, *comparison.outcome.bands]
        learning = comparison.outcome.learning
        if learning:
            lines = [f"cannot tell: {learning}: no row or band past the noise and the threshold",
                     NEXT_STEP]  # fmt: skip
        elif judged and all(j.state == CANNOT_TELL for j in judged):
            why = "; ".join(sorted({j.reason for j in judged if j.reason})) or "no verdict"
            lines = [f"cannot tell: {why}: no row or band past the noise and the threshold"]
        else:
            lines = ["no change seen: no row or band past the noise and the threshold"]
    return lines


NEXT_STEP = (
    "to judge, give the baseline nights: save each night into a baseline window (distbench "
    "baseline save RUN --name NAME, or ci/nightly.sh --update-baseline) and compare against it "
    "once it holds --min-nights nights (docs/gate.md#learning-the-noise)"
)
"""What a comparison still learning the noise needs, printed under its verdict: the learning is
the baseline's count of nights, and a run or night directory is one night whatever its launches
(engine.py: the window's nights), so only a window (or a lower --min-nights) ends it."""


def box_line(reason: str) -> str:
    """The night that could not tell, and what to do about it."""
    return (
        f"cannot tell: {reason}; no primitive is judged tonight. A change of code that slows "
        "several primitives at once, some sizes more than others, can read the same: sweep "
        "again on a quiet box, and if the same primitives are slower again, "
        "look for a change that touched them; if the box changed for good, start a new baseline "
        "window (docs/gate.md#the-box-changed)"
    )


def missing_line(comparison: Comparison) -> str | None:
    missing = comparison.missing
    if not missing:
        return None
    named = "; ".join(row_name(u.key) for u in missing[:FIRST_MISSING])
    more = f" and {len(missing) - FIRST_MISSING} more" if len(missing) > FIRST_MISSING else ""
    tail = "" if comparison.allow_missing else " (--allow-missing lets this pass)"
    return f"missing from the current run: {len(missing)}: {named}{more}{tail}"


def shown_keys(comparison: Comparison) -> list[str]:
    keys = [j.hypothesis.band for j in comparison.outcome.rows]
    return [
        name for name in SHOWN_KEYS
        if len({dict(k).get(name, "") for k in keys}) > 1 or name in ("primitive", "size_bytes")
    ]  # fmt: skip


def cell(name: str, value: str) -> str:
    if name == "size_bytes" and value.isdigit():
        return format_size(int(value))
    return value or "-"


def interval_text(judged: Judged) -> str:
    low, high = judged.interval()
    if not math.isfinite(low):
        return "-"
    return f"[{low * 100:+.0f}, {high * 100:+.0f}] %{level_text(judged.level)}"


def row_table(comparison: Comparison, only: str | None = None) -> tuple[list[str], list[list[str]]]:
    shown = shown_keys(comparison)
    header = ["#", *(("size" if n == "size_bytes" else n) for n in shown)]
    change = "beyond run" if comparison.outcome.relative else "change"
    header += ["baseline", "current", change, "interval", "q", "state"]
    lines = []
    for number, (judged, (base, cur)) in enumerate(
        zip(comparison.outcome.rows, comparison.values, strict=True), 1
    ):
        if only is not None and judged.state != only:
            continue
        key = dict(judged.hypothesis.band)
        if comparison.sizes and comparison.sizes[number - 1]:
            key["size_bytes"] = comparison.sizes[number - 1]  # as asked: 1K, not 1008 at 3 ranks
        q = judged.q_slower if judged.change >= 0 else judged.q_faster
        lines.append([
            str(number), *(cell(n, key.get(n, "")) for n in shown),
            format_number(base, METRIC_DIGITS), format_number(cur, METRIC_DIGITS),
            f"{judged.change * 100:+.1f} %" if math.isfinite(judged.change) else "-",
            interval_text(judged), format_number(q, ".2g"), describe_state(judged),
        ])  # fmt: skip
    return header, lines


def context(comparison: Comparison) -> list[str]:
    return [
        f"baseline: {comparison.baseline.path}",
        f"current:  {comparison.current.path}",
        *machine_lines(comparison),
        *settings_lines(comparison),
        f"metric {comparison.metric.name}; threshold floor {comparison.thresholds.default} "
        "(a change must pass it as well as the noise)",
        noise_line(comparison),
        parts_line(comparison),
        family_line(comparison),
        *([line] if (line := relative_line(comparison)) else []),
    ]


def unmatched_lines(comparison: Comparison) -> list[str]:
    groups: dict[tuple[str, str], int] = {}
    for u in comparison.unmatched:
        if u.outcome != ONLY_BASELINE:
            groups[(u.outcome, u.reason)] = groups.get((u.outcome, u.reason), 0) + 1
    return [f"{n} {outcome}: {reason}" for (outcome, reason), n in groups.items()]


def columns_line(comparison: Comparison) -> str:
    """How the rows' cells read: the values' unit, the change's direction (in time terms, so a
    bandwidth that rose reads negative), and why an interval that leaves out 0 can sit beside
    q = 1 (the interval is the row's alone, q is adjusted over every hypothesis tested)."""
    metric = comparison.metric
    change = "beyond run" if comparison.outcome.relative else "change"
    flipped = " (a bandwidth or rate that rose reads negative)" if metric.higher_is_better else ""
    outcome = comparison.outcome
    levels = sorted(
        {j.level for j in (*outcome.rows, *outcome.bands) if j.state in (REGRESSED, IMPROVED)}
    )
    shown = " to ".join(f"{level:.1%}" for level in {levels[0], levels[-1]}) if levels else ""
    chosen = (
        f"; beside a verdict, the level of the test that chose it ({shown} here), printed after "
        "the interval: it always excludes 0, and is wider than 95 % in a large comparison, "
        "narrower in a small one (docs/gate.md: the interval beside a verdict)"
        if levels
        else ""
    )
    shifts = [j.shift for j in outcome.rows if j.shift is not None]
    if shifts and all(shift.data_df == 0 for shift in shifts):
        chosen += (
            " (on the stated default spread, nothing measured: wide, such intervals held the "
            "truth more often than 95 % on the box it was measured on, docs/gate.md)"
        )
    return (
        f"columns: baseline and current in {metric.unit} ({metric.name}); {change} in time "
        f"terms, + slower{flipped}; interval: 95 % for the row alone{chosen}; q: of the "
        "change's direction (slower where +, else faster; the JSON has both), "
        f"Benjamini-Hochberg over all {outcome.family_size} hypotheses, so an interval that "
        "leaves out 0 can sit beside q = 1"
    )


def render_text(comparison: Comparison) -> str:
    out = [headline(comparison), *verdict_lines(comparison)]
    if (line := missing_line(comparison)) is not None:
        out.append(line)
    out += [
        "",
        seen_header(comparison),
        *(f"  {s}" for s in seen_lines(comparison)),
    ]
    if comparison.regressed:
        regressed = row_table(comparison, REGRESSED)
        if regressed[1]:
            out += ["", "regressed rows:", *render_rows(*regressed, NUMBER_COLUMNS)]
    out += ["", *context(comparison), "", f"all rows ({len(comparison.outcome.rows)}):"]
    out += [f"  {columns_line(comparison)}"]
    out += render_rows(*row_table(comparison), NUMBER_COLUMNS)
    notes = [*unmatched_lines(comparison), *comparison.notes]
    if notes:
        out += ["", "notes:", *(f"  {n}" for n in notes)]
    out += ["", headline(comparison)]
    return "\n".join(out)


def md_table(header: list[str], lines: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for cells in lines:
        if cells[-1] == REGRESSED:
            cells = [*cells[:-1], f"**{REGRESSED}**"]
        out.append("| " + " | ".join(cells) + " |")
    return out


def render_markdown(comparison: Comparison) -> str:
    out = [f"### {headline(comparison)}", "", *(f"- {line}" for line in verdict_lines(comparison))]
    if (line := missing_line(comparison)) is not None:
        out += [f"- **{line}**"]
    header = seen_header(comparison)
    out += ["", header[:1].upper() + header[1:], ""]
    out += [f"- {s}" for s in seen_lines(comparison)]
    out += ["", *(f"- {line}" for line in context(comparison))]
    out += ["", f"<details><summary>All {len(comparison.outcome.rows)} rows</summary>", ""]
    legend = columns_line(comparison)
    out += [legend[:1].upper() + legend[1:], ""]
    out += [*md_table(*row_table(comparison)), "", "</details>"]
    notes = [*unmatched_lines(comparison), *comparison.notes]
    if notes:
        out += ["", "Notes:", "", *(f"- {n}" for n in notes)]
    return "\n".join(out)


def clean(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


WHOLE_NUMBERS = frozenset(
    ("world_size", "nnodes", "size_bytes", "size_from", "size_to", "root", "src", "dst",
     "batch_size", "params", "avg_every", "window", "microbatches")
)  # fmt: skip
"""Key columns whose cells are whole numbers: JSON numbers in the rows, bands and unmatched rows
(results.csv holds text; jq's numeric filters want numbers)."""


def typed(key: Any) -> dict[str, Any]:
    """A row's or band's key cells, whole numbers as numbers (an empty cell stays '')."""
    return {
        name: int(value) if name in WHOLE_NUMBERS and re.fullmatch(r"-?\d+", value) else value
        for name, value in dict(key).items()
    }


def judged_json(comparison: Comparison, judged: Judged) -> dict[str, Any]:
    low, high = judged.interval()
    shift = judged.shift
    return {k: clean(v) for k, v in {
        "change": judged.change, "low": low, "high": high, "level": judged.level,
        "p_slower": judged.p_slower, "q_slower": judged.q_slower,
        "p_faster": judged.p_faster, "q_faster": judged.q_faster,
        "state": judged.state, "reason": judged.reason,
        "detectable_change": judged.detectable, "floor": judged.floor,
        "scope": scope(comparison, judged),
        "launches_baseline": shift.n_base if shift else 0,
        "launches_current": shift.n_current if shift else 0,
        "df": shift.df if shift else None,
        "nights_baseline": shift.nights_base if shift else 0,
        "nights_current": shift.nights_current if shift else 0,
        "variance_trial": shift.within if shift else None,
        "variance_launch": shift.variance if shift else None,
        "variance_night": shift.night if shift else None,
        "prior": shift.prior_source if shift else None,
    }.items()}  # fmt: skip


def render_json(comparison: Comparison) -> str:
    outcome = comparison.outcome
    rows = [
        {**typed(j.hypothesis.band), "column": column, "baseline": clean(base),
         "current": clean(cur), **judged_json(comparison, j)}
        for j, (base, cur), column in zip(
            outcome.rows, comparison.values, comparison.columns, strict=True
        )
    ]  # fmt: skip
    bands = [
        {"primitive": j.hypothesis.primitive.split(":", 1)[-1], "band": typed(j.hypothesis.band),
         "rows": list(j.hypothesis.members), **judged_json(comparison, j)}
        for j in outcome.bands
    ]  # fmt: skip
    body = {
        "version": JSON_VERSION,
        "status": comparison.status(),
        "exit_code": comparison.exit_code,
        "regressed": comparison.regressed,
        "baseline": str(comparison.baseline.path),
        "current": str(comparison.current.path),
        "metric": comparison.metric.name,
        "alpha": comparison.settings.alpha,
        "min_nights": comparison.settings.min_nights,
        "nights": list(outcome.nights),
        "learning": outcome.learning,
        "box": outcome.box,
        "relative": outcome.relative,
        "family_size": outcome.family_size,
        "summary": {state: sum(1 for j in outcome.rows if j.state == state) for state in STATES},
        "verdicts": [verdict_line(comparison, j) for j in headline_verdicts(comparison)],
        "measured_differently": settings_lines(comparison),
        "detectable": seen_lines(comparison),
        "rows": rows,
        "bands": bands,
        "unmatched": [
            {
                **typed(u.key),
                "column": u.column,
                "value": clean(u.value),
                "outcome": u.outcome,
                "reason": u.reason,
            }
            for u in comparison.unmatched
        ],
        "notes": comparison.notes,
    }
    return json.dumps(body, indent=2)


def render_junit(comparison: Comparison) -> str:
    """JUnit XML (reports/compare/junit.py, imported when asked: it builds on this module)."""
    from distbench.reports.compare.junit import render_junit as junit

    return junit(comparison)


RENDERERS = {
    "table": render_text,
    "markdown": render_markdown,
    "json": render_json,
    "junit": render_junit,
}
