"""`distbench compare BASELINE CURRENT`: match the rows of two runs, and say for each whether it
regressed, improved, stayed the same, or changed by less than its noise.

A row regresses only when both hold:
  1. its metric got worse by more than its threshold (direction-aware: time up, bandwidth down);
  2. its samples say so too: a one-sided Mann-Whitney U test (reports/noise.py) of the current
     max-over-ranks samples against the baseline's gives p <= alpha.
A change past the threshold that the samples cannot tell from noise is `within-noise`. When the
sample counts are too small for the test ever to reach alpha (2 trials per run: p >= 1/6), or a
row has no samples, the threshold alone decides and the row's note says so.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

from distbench.parse import UsageError, format_size
from distbench.reports.checks import Metric, Threshold, Thresholds
from distbench.reports.noise import rank_test
from distbench.reports.runs import Row, Run

REGRESSED, IMPROVED, UNCHANGED, NOISE = "regressed", "improved", "unchanged", "within-noise"
ONLY_BASELINE, ONLY_CURRENT, SKIPPED = "only-baseline", "only-current", "not-compared"
VERDICTS = (REGRESSED, IMPROVED, NOISE, UNCHANGED, ONLY_BASELINE, ONLY_CURRENT, SKIPPED)

EXIT_OK, EXIT_REGRESSED = 0, 1


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
    note: str = ""


@dataclass(frozen=True)
class Comparison:
    baseline: str
    current: str
    metric: str
    alpha: float
    rows: list[RowVerdict]
    notes: list[str] = field(default_factory=list)
    """Remarks on the whole comparison (different hosts, torch versions, duplicate rows)."""

    def count(self, verdict: str) -> int:
        return sum(1 for row in self.rows if row.verdict == verdict)

    @property
    def regressed(self) -> bool:
        return self.count(REGRESSED) > 0

    @property
    def exit_code(self) -> int:
        return EXIT_REGRESSED if self.regressed else EXIT_OK

    def summary(self) -> str:
        parts = [f"{self.count(v)} {v}" for v in VERDICTS if self.count(v)]
        return ", ".join(parts) if parts else "no rows"


def judge(
    baseline: Row, current: Row, metric: Metric, threshold: Threshold, alpha: float, noise: bool
) -> RowVerdict:
    """The verdict for one matched row."""
    key = dict(baseline.key)
    column = metric.column(baseline.kind)
    if column is None:
        return RowVerdict(
            key, "", None, None, None, None, str(threshold), None, SKIPPED,
            f"{metric.name} does not exist for {baseline.kind} rows",
        )  # fmt: skip
    base, cur = baseline.metric(column), current.metric(column)
    if base is None or cur is None:
        return RowVerdict(
            key, column, base, cur, None, None, str(threshold), None, SKIPPED,
            f"{column} is empty in {'the baseline' if base is None else 'the current run'}",
        )  # fmt: skip
    ratio = cur / base if base != 0 else (1.0 if cur == 0 else math.inf)
    worse = threshold.worse_by(base, cur, metric)
    p_value: float | None = None
    note = ""
    # Samples are always times (op or step), whatever the metric: slower = worse.
    if baseline.samples_us and current.samples_us and worse != 0:
        slower = worse > 0
        test = (
            rank_test(baseline.samples_us, current.samples_us)
            if slower
            else rank_test(current.samples_us, baseline.samples_us)
        )
        p_value = test.p_value
        if test.min_p_value > alpha:
            note = (
                f"too few samples for the noise test ({test.n_baseline} vs {test.n_current}, "
                f"smallest p {test.min_p_value:.3g} > alpha {alpha:g}): threshold only"
            )
    elif not baseline.samples_us or not current.samples_us:
        note = "no samples: threshold only"
    past = abs(worse) > threshold.value
    if not past:
        verdict = UNCHANGED
    elif not noise or p_value is None or note:
        verdict = REGRESSED if worse > 0 else IMPROVED
        if not noise:
            note = "noise test off: threshold only"
    elif p_value <= alpha:
        verdict = REGRESSED if worse > 0 else IMPROVED
    else:
        verdict = NOISE
        note = f"past the threshold but the samples overlap (p={p_value:.3g} > {alpha:g})"
    return RowVerdict(key, column, base, cur, ratio, worse, str(threshold), p_value, verdict, note)


def describe_run(run: Run) -> str:
    m = run.manifest
    bits = [
        f"host={m.get('host', '?')}",
        f"torch={m.get('torch', '?')}",
        f"git={str(m.get('distbench_git_sha') or '?')[:10]}",
        f"started={m.get('started_utc', '?')}",
    ]
    return f"{run.path}  " + " ".join(bits)


def compare_runs(
    baseline: Run,
    current: Run,
    metric: Metric,
    thresholds: Thresholds,
    alpha: float = 0.05,
    noise: bool = True,
) -> Comparison:
    """Match rows by what they measured and judge each; UsageError when nothing matches."""
    if not 0 < alpha < 1:
        raise UsageError(f"--alpha {alpha} must be between 0 and 1, e.g. 0.05")
    common = [k for k in baseline.rows if k in current.rows]
    if not common:
        raise UsageError(
            f"{baseline.path} and {current.path} have no row in common (rows match on "
            "primitive, backend, device, world size, dtype, size, mode, op, root, src, dst, "
            "pattern; DDP rows on strategy, model, bucket_mb ...): compare runs of the same sweep"
        )
    rows: list[RowVerdict] = []
    for key, base_row in baseline.rows.items():
        if key in current.rows:
            threshold = thresholds.for_row(base_row.values)
            rows.append(judge(base_row, current.rows[key], metric, threshold, alpha, noise))
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
            notes.append(f"the {which} repeats {run.duplicates} row(s); the last of each is used")
    return Comparison(
        baseline=describe_run(baseline),
        current=describe_run(current),
        metric=metric.name,
        alpha=alpha,
        rows=rows,
        notes=notes,
    )


def _one_sided(row: Row, verdict: str, metric: Metric, note: str) -> RowVerdict:
    column = metric.column(row.kind) or ""
    value = row.metric(column) if column else None
    base, cur = (value, None) if verdict == ONLY_BASELINE else (None, value)
    return RowVerdict(dict(row.key), column, base, cur, None, None, "", None, verdict, note)


# ---- rendering -------------------------------------------------------------------------------


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


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    if math.isinf(value):
        return "inf"
    return f"{value:.4g}" if abs(value) < 1e4 else f"{value:.0f}"


def _worse(row: RowVerdict) -> str:
    if row.worse_by is None:
        return "-"
    unit = "%" if row.threshold.endswith("%") else ""
    return f"{row.worse_by:+.1f}{unit}"


def _table_cells(comparison: Comparison) -> tuple[list[str], list[list[str]], dict[str, str]]:
    shown, common = _key_columns(comparison.rows)
    header = [
        *(("size" if n == "size_bytes" else n) for n in shown),
        "baseline",
        "current",
        "ratio",
        "worse_by",
        "threshold",
        "p",
        "verdict",
    ]
    lines = []
    for row in comparison.rows:
        lines.append(
            [
                *(_cell(n, row.key.get(n, "")) for n in shown),
                _number(row.baseline),
                _number(row.current),
                f"{row.ratio:.3f}" if row.ratio is not None and math.isfinite(row.ratio) else "-",
                _worse(row),
                row.threshold or "-",
                f"{row.p_value:.3g}" if row.p_value is not None else "-",
                row.verdict,
            ]
        )
    return header, lines, common


def _header_lines(comparison: Comparison, common: dict[str, str]) -> list[str]:
    return [
        f"baseline: {comparison.baseline}",
        f"current:  {comparison.current}",
        f"metric: {comparison.metric} (worse_by > threshold and rank-test p <= "
        f"{comparison.alpha:g} = regressed)",
        "common: " + " ".join(f"{k}={v}" for k, v in common.items()),
    ]


def render_text(comparison: Comparison) -> str:
    header, lines, common = _table_cells(comparison)
    widths = [max(len(c) for c in column) for column in zip(header, *lines, strict=True)]
    out = [*_header_lines(comparison, common), ""]
    out.append("  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)))
    out += ["  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)) for cells in lines]
    notes = [f"  {i}: {r.note}" for i, r in enumerate(comparison.rows, 1) if r.note]
    if notes:
        out += ["", "notes (row number: note):", *notes]
    out += ["", *(f"note: {n}" for n in comparison.notes), f"summary: {comparison.summary()}"]
    return "\n".join(out)


def render_markdown(comparison: Comparison) -> str:
    header, lines, common = _table_cells(comparison)
    verdict_at = len(header) - 1
    status = "regression" if comparison.regressed else "no regression"
    out = [f"### distbench compare: {status} ({comparison.summary()})", ""]
    out += [f"- {line}" for line in _header_lines(comparison, common)]
    out += [f"- note: {n}" for n in comparison.notes]
    out += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for cells in lines:
        if cells[verdict_at] == REGRESSED:
            cells = [*cells[:verdict_at], f"**{REGRESSED}**"]
        out.append("| " + " | ".join(cells) + " |")
    notes = [f"{i}. {r.note}" for i, r in enumerate(comparison.rows, 1) if r.note]
    if notes:
        out += ["", "Notes by row:", "", *notes]
    return "\n".join(out)


def render_json(comparison: Comparison) -> str:
    def clean(value: object) -> object:
        return None if isinstance(value, float) and not math.isfinite(value) else value

    body = asdict(comparison)
    body["rows"] = [{k: clean(v) for k, v in row.items()} for row in body["rows"]]
    body["summary"] = {v: comparison.count(v) for v in VERDICTS}
    body["regressed"] = comparison.regressed
    return json.dumps(body, indent=2)


RENDERERS = {"table": render_text, "markdown": render_markdown, "json": render_json}
