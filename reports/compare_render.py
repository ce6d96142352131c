"""A Comparison as a terminal table, Markdown (the CI job summary) or JSON. The verdict comes
first: the status and counts, what chance alone would give, the regressed and missing rows; then
the rule, every row, and the row notes grouped by reason (one line per reason, not per row).
Numbers and the terminal tables are every table's (distbench.tables): the metric with
METRIC_DIGITS significant digits, plain text as wide as the table."""

from __future__ import annotations

import json
import math
from dataclasses import asdict

from distbench.parse import format_size
from distbench.reports.compare import (
    ONLY_BASELINE,
    REGRESSED,
    VERDICTS,
    Comparison,
    RowVerdict,
)
from distbench.reports.primitive_rule import primitive_lines
from distbench.tables import format_number, render_rows

FIRST_MISSING = 5
"""Missing rows named in the verdict; the full table lists them all."""
METRIC_DIGITS = 4
"""Significant digits of a row's baseline and current value, as the HTML report prints them."""
NUMBER_COLUMNS = ("#", "size", "baseline", "current", "ratio", "worse_by", "threshold", "p", "q")
"""Right-aligned in the terminal table."""
NAME_KEYS = ("strategy", "pattern", "op", "root", "src", "dst", "mode", "backend", "device")


def row_name(row: RowVerdict) -> str:
    """'all_reduce 1M float32 n=2 pattern=ring': enough to find the row in the table."""
    key = row.key
    size = key.get("size_bytes", "")
    parts = [key.get("primitive", "?")]
    parts += [format_size(int(size))] if size.isdigit() else []
    parts += [key["dtype"]] if key.get("dtype") else []
    parts += [f"n={key['world_size']}"] if key.get("world_size") else []
    parts += [f"{k}={key[k]}" for k in NAME_KEYS[:6] if key.get(k)]
    return " ".join(parts)


def headline(comparison: Comparison) -> str:
    return f"distbench compare: {comparison.status()} ({comparison.counts()})"


def chance_line(comparison: Comparison) -> str:
    rule, tested = comparison.rule, comparison.tested
    if not rule.noise_test or not tested:
        return "chance alone: no row was rank-tested (thresholds only)"
    line = (
        f"chance alone: {comparison.chance:.2g} of {tested} tested rows would reach "
        f"p <= {rule.alpha:g} on unchanged code"
    )
    if rule.fdr:
        line += (
            f"; Benjamini-Hochberg on: on unchanged code the chance of any false alarm stays "
            f"<= {rule.alpha:.0%}, otherwise the expected share of false alarms among the flagged"
        )
    return line


def verdict_lines(comparison: Comparison) -> list[str]:
    """What chance alone gives for the rows, then the per-primitive verdict."""
    return [
        chance_line(comparison),
        *primitive_lines(comparison.primitives, comparison.rule.min_effect),
    ]


def rule_line(comparison: Comparison) -> str:
    rule = comparison.rule
    test = "BH q" if rule.fdr else "p"
    parts = [
        f"metric {comparison.metric}: regressed = worse than its threshold",
        f"rank test {test} <= {rule.alpha:g} on >= {rule.min_samples} samples per side"
        if rule.noise_test
        else "noise test off",
    ]
    if rule.adjacent:
        parts.append("at two adjacent sizes")
    if rule.by_primitive:
        parts.append(
            f"or a primitive's rows slower than the other primitives' (rank test, "
            f"{'BH q' if rule.fdr else 'p'} <= {rule.alpha:g}, "
            f"median >= {rule.min_effect:.0%} beyond)"
        )
    missing = "missing rows pass (--allow-missing)" if rule.allow_missing else "missing rows fail"
    return "rule: " + ", ".join(parts) + f"; {missing}"


def missing_line(comparison: Comparison) -> str | None:
    missing = comparison.of(ONLY_BASELINE)
    if not missing:
        return None
    named = "; ".join(row_name(r) for r in missing[:FIRST_MISSING])
    more = f" and {len(missing) - FIRST_MISSING} more" if len(missing) > FIRST_MISSING else ""
    tail = "" if comparison.rule.allow_missing else " (--allow-missing lets this pass)"
    return f"missing from the current run: {len(missing)}: {named}{more}{tail}"


def grouped_notes(comparison: Comparison) -> list[str]:
    """One line per (verdict, reason): the count and the row numbers, each row's own detail."""
    groups: dict[tuple[str, str], list[tuple[int, RowVerdict]]] = {}
    for number, row in enumerate(comparison.rows, 1):
        if row.reason and row.verdict != ONLY_BASELINE:
            groups.setdefault((row.verdict, row.reason), []).append((number, row))
    lines = []
    for (verdict, reason), members in groups.items():
        numbers = ", ".join(str(n) for n, _row in members[:12])
        more = ", ..." if len(members) > 12 else ""
        lines.append(f"{len(members)} {verdict}: {reason} (rows {numbers}{more})")
    return lines


def _key_columns(rows: list[RowVerdict]) -> tuple[list[str], dict[str, str]]:
    """Key columns that vary between rows (shown per row) and those every row shares."""
    names: list[str] = []
    for row in rows:
        names += [name for name in row.key if name not in names and name != "kind"]
    shown, common = [], {}
    for name in names:
        values = {row.key.get(name, "") for row in rows}
        if values == {""}:
            continue
        if len(values) == 1 and name not in ("primitive", "size_bytes"):
            common[name] = values.pop()
        else:
            shown.append(name)
    return shown, common


def _cell(name: str, value: str) -> str:
    if name == "size_bytes" and value.isdigit():
        return format_size(int(value))
    return value or "-"


def _worse(row: RowVerdict) -> str:
    if row.worse_by is None:
        return "-"
    unit = "%" if row.threshold.endswith("%") else ""
    return format_number(row.worse_by, "+.1f") + unit


def table(
    rows: list[RowVerdict], numbers: list[int], common_from: list[RowVerdict]
) -> tuple[list[str], list[list[str]]]:
    shown, _common = _key_columns(common_from)
    header = ["#", *(("size" if n == "size_bytes" else n) for n in shown)]
    header += ["baseline", "current", "ratio", "worse_by", "threshold", "p", "q", "verdict"]
    lines = []
    for number, row in zip(numbers, rows, strict=True):
        lines.append(
            [
                str(number),
                *(_cell(n, row.key.get(n, "")) for n in shown),
                format_number(row.baseline, METRIC_DIGITS),
                format_number(row.current, METRIC_DIGITS),
                format_number(row.ratio, ".3f", infinite="-"),
                _worse(row),
                row.threshold or "-",
                format_number(row.p_value, ".3g"),
                format_number(row.q_value, ".3g"),
                row.verdict,
            ]
        )
    return header, lines


def _text_table(header: list[str], lines: list[list[str]]) -> list[str]:
    return render_rows(header, lines, NUMBER_COLUMNS)


def units_line(comparison: Comparison) -> str:
    """What the rank test compared, and the smallest p it can reach there: its resolution."""
    counts: dict[str, int] = {}
    for row in comparison.rows:
        if row.units:
            counts[row.units] = counts.get(row.units, 0) + 1
    parts = []
    for units, rows in sorted(counts.items(), key=lambda item: -item[1]):
        n, _vs, m, _unit = units.split(" ", 3)
        smallest = 1 / math.comb(int(n) + int(m), int(n)) if n.isdigit() and m.isdigit() else 1
        parts.append(f"{rows} rows at {units} (smallest p {smallest:.2g})")
    return "independent samples: " + ("; ".join(parts) or "none")


def _context(comparison: Comparison) -> list[str]:
    _shown, common = _key_columns(comparison.rows)
    return [
        f"baseline: {comparison.baseline}",
        f"current:  {comparison.current}",
        rule_line(comparison),
        units_line(comparison),
        "common: " + " ".join(f"{k}={v}" for k, v in common.items()),
    ]


def _regressed(comparison: Comparison) -> tuple[list[RowVerdict], list[int]]:
    pairs = [(r, n) for n, r in enumerate(comparison.rows, 1) if r.verdict == REGRESSED]
    return [r for r, _n in pairs], [n for _r, n in pairs]


def render_text(comparison: Comparison) -> str:
    out = [headline(comparison), *verdict_lines(comparison)]
    regressed, numbers = _regressed(comparison)
    if regressed:
        out += ["", f"regressed ({len(regressed)}):"]
        out += _text_table(*table(regressed, numbers, comparison.rows))
    if (line := missing_line(comparison)) is not None:
        out += ["", line]
    out += ["", *_context(comparison), "", f"all rows ({len(comparison.rows)}):"]
    every = list(range(1, len(comparison.rows) + 1))
    out += _text_table(*table(comparison.rows, every, comparison.rows))
    notes = grouped_notes(comparison)
    if notes or comparison.notes:
        out += ["", "notes:", *(f"  {n}" for n in notes), *(f"  {n}" for n in comparison.notes)]
    chance = f"; chance alone: {comparison.chance:.2g} of {comparison.tested} tested rows"
    bh = ", BH on" if comparison.rule.fdr else ""
    tail = f"{chance}{bh}" if comparison.tested and comparison.rule.noise_test else ""
    if comparison.primitives:
        tail += f"; {len(comparison.primitives)} primitives tested against the others"
    out += ["", f"summary: {comparison.status()}: {comparison.counts()}{tail}"]
    return "\n".join(out)


def _md_table(header: list[str], lines: list[list[str]]) -> list[str]:
    verdict_at = len(header) - 1
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for cells in lines:
        if cells[verdict_at] == REGRESSED:
            cells = [*cells[:verdict_at], f"**{REGRESSED}**"]
        out.append("| " + " | ".join(cells) + " |")
    return out


def render_markdown(comparison: Comparison) -> str:
    out = [f"### {headline(comparison)}", "", *(f"- {line}" for line in verdict_lines(comparison))]
    regressed, numbers = _regressed(comparison)
    if regressed:
        out += ["", f"**Regressed ({len(regressed)})**", ""]
        out += _md_table(*table(regressed, numbers, comparison.rows))
    if (line := missing_line(comparison)) is not None:
        out += ["", f"**{line}**"]
    out += ["", *(f"- {line}" for line in _context(comparison))]
    out += ["", f"<details><summary>All {len(comparison.rows)} rows</summary>", ""]
    every = list(range(1, len(comparison.rows) + 1))
    out += _md_table(*table(comparison.rows, every, comparison.rows))
    out += ["", "</details>"]
    notes = [*grouped_notes(comparison), *comparison.notes]
    if notes:
        out += ["", "Notes:", "", *(f"- {n}" for n in notes)]
    return "\n".join(out)


def render_json(comparison: Comparison) -> str:
    def clean(value: object) -> object:
        return None if isinstance(value, float) and not math.isfinite(value) else value

    body = asdict(comparison)
    body["rule"]["thresholds"] = str(comparison.rule.thresholds.default)
    body["rows"] = [{k: clean(v) for k, v in row.items()} for row in body["rows"]]
    body["summary"] = {v: comparison.count(v) for v in VERDICTS}
    body["status"] = comparison.status()
    body["regressed"] = comparison.regressed
    body["exit_code"] = comparison.exit_code
    body["chance_false_alarms"] = comparison.chance
    return json.dumps(body, indent=2)


RENDERERS = {"table": render_text, "markdown": render_markdown, "json": render_json}
