"""One trend panel per case, as inline SVG: its judged series night by night, the night's launches
as a band (lowest to highest), change points as red (regressed) or green (improved) lines (the
runs their step may have started in, 95 %, shaded in their colour), a cut in the column's
definition as a grey dashed line, runs labelled by date and git revision (and time, where runs
share a date; the axis names the first, the last and each change point's run).

Why SVG by hand rather than matplotlib, which draws report's figures: a matplotlib panel took
0.58 s to save on this box, so 500 cases would take 5 minutes; these take milliseconds, and the
page stays one file without scripts (docs/history.md).
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from distbench.reports.history.detect import codes_of
from distbench.reports.history.load import METRIC_BY_NAME, RunInfo
from distbench.stats.verdict import REGRESSED

if TYPE_CHECKING:
    from distbench.reports.history.build import History

REGRESSION, IMPROVEMENT, CUT, LINE, BAND = "#cf222e", "#1a7f37", "#8c959f", "#0969da", "#b6e3ff"
WIDTH, HEIGHT, LEFT, TOP, BOTTOM = 720, 110, 70, 8, 22


def scale(values: np.ndarray, low: float, high: float, size: float) -> np.ndarray:
    span = (high - low) or 1.0
    return TOP + size * (1.0 - (values - low) / span)


def coordinates(x: np.ndarray, y: np.ndarray) -> str:
    """'x,y x,y ...' in tenths of a pixel, as integers (drawn inside TENTHS): an SVG polyline's
    points. Integers print twice as fast as one-decimal floats (1,000 panels of 1,000 nights)."""
    tenths = np.rint(np.stack([x, y]) * 10).astype(np.int64).tolist()
    return " ".join(map("{},{}".format, *tenths))


TENTHS = '<g transform="scale(0.1)">'
"""The group whose coordinates are tenths of a pixel (strokes keep their width in pixels)."""


def chart(
    points: dict[str, np.ndarray], metric: str, runs: int, labels: list[str],
    marks: list[tuple[int, str]], unit: str | None = None,
    spans: Sequence[tuple[int, int, str]] = (),
) -> str:  # fmt: skip
    """One series as an <svg>: x = run position, y = value (linear, the band's range). `points`:
    its nights' value, low, high, run and segment, as arrays; `unit`: the axis' unit (default:
    the metric's); `spans`: (first, last, colour) of each change point's 95 % range of runs,
    shaded where it is more than one run."""
    plot_w, plot_h = WIDTH - LEFT - 10, HEIGHT - TOP - BOTTOM
    step = plot_w / max(runs - 1, 1)
    value = points["value"]
    lows = np.where(np.isnan(low := points["low"]), value, low)
    highs = np.where(np.isnan(high := points["high"]), value, high)
    bottom = float(min(lows.min(), highs.min(), value.min()))
    top = float(max(lows.max(), highs.max(), value.max()))
    x = LEFT + step * points["run"]
    y, y_low, y_high = (scale(v, bottom, top, plot_h) for v in (value, lows, highs))
    band = coordinates(np.concatenate([x, x[::-1]]), np.concatenate([y_high, y_low[::-1]]))
    line = coordinates(x, y)
    parts = [
        f'<svg width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="{html.escape(metric)}">',
        f'{TENTHS}<polygon points="{band}" fill="{BAND}" stroke="none"/>',
        f'<polyline points="{line}" fill="none" stroke="{LINE}" stroke-width="1.2" '
        'vector-effect="non-scaling-stroke"/></g>',
        f'<text x="2" y="{TOP + 10}" font-size="10">{top:.4g}</text>',
        f'<text x="2" y="{TOP + plot_h}" font-size="10">{bottom:.4g}</text>',
        f'<text x="2" y="{TOP + plot_h / 2 + 4}" font-size="10" font-weight="600">'
        f"{html.escape(metric)} ({html.escape(unit or METRIC_BY_NAME[metric].unit)})</text>",
    ]
    for first, last, color in spans:
        if last > first:
            left = LEFT + step * (first - 0.5)
            parts.append(
                f'<rect x="{left:.1f}" y="{TOP}" width="{step * (last - first):.1f}" '
                f'height="{plot_h}" fill="{color}" fill-opacity="0.12"/>'
            )
    cuts = points["run"][1:][np.diff(points["segment"]) > 0].tolist()
    lines = [(int(c), CUT, "4,3") for c in cuts] + [(p, color, "") for p, color in marks]
    for position, color, dash in lines:
        xi = LEFT + step * (position - 0.5)
        parts.append(
            f'<line x1="{xi:.1f}" x2="{xi:.1f}" y1="{TOP}" y2="{TOP + plot_h}" '
            f'stroke="{color}" stroke-width="1.5" stroke-dasharray="{dash}"/>'
        )
    for position in sorted({0, runs - 1, *(p for p, _ in marks)}):
        anchor = "start" if position == 0 else "end" if position == runs - 1 else "middle"
        parts.append(
            f'<text x="{LEFT + step * position:.1f}" y="{HEIGHT - 6}" font-size="9" '
            f'text-anchor="{anchor}">{html.escape(labels[position])}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def axis_labels(runs: list[RunInfo]) -> list[str]:
    """Each run's date and revision ('2026-11-29 02235a9'), with its start's time where runs
    share a date ('2026-11-29 02:00 02235a9'): several nights of one day, or one revision
    measured again, would read alike."""
    if len({run.started_utc[:10] for run in runs}) == len(runs):
        return [run.label for run in runs]
    timed = ((run.started_utc[:10] or "?", run.started_utc[11:16], run.git_sha[:7]) for run in runs)
    return [" ".join(p for p in (day, time, sha or "?") if p) for day, time, sha in timed]


def panels(history: History) -> list[str]:
    """An HTML <figure> per case, cases in name order, after the whole run's (relative mode:
    its common level night by night, 1 = the run's mean state)."""
    labels = axis_labels(history.runs)
    marks: dict[tuple[str, str], list[tuple[int, str]]] = {}
    spans: dict[tuple[str, str], list[tuple[int, int, str]]] = {}
    for cp in history.change_points:
        color = REGRESSION if cp.state == REGRESSED else IMPROVEMENT
        marks.setdefault((cp.case, cp.metric), []).append((cp.position, color))
        spans.setdefault((cp.case, cp.metric), []).append((*cp.span, color))
    out = []
    for whole in history.wholes:
        nan = np.full(len(whole.values), np.nan)
        points = dict(value=whole.values, low=nan, high=nan, run=whole.runs.astype(float),
                      segment=np.zeros(len(whole.values)))  # fmt: skip
        mark = marks.get((whole.case, whole.metric), [])
        span = spans.get((whole.case, whole.metric), [])
        svg = chart(points, whole.metric, len(labels), labels, mark, WHOLE_UNIT, span)
        caption = f"{whole.case}: what moved every primitive alike"
        out.append(f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>")
    frame = history.points
    cases, case_names = codes_of(frame["case"])
    metrics, metric_names = codes_of(frame["metric"])
    order = np.lexsort((frame["run"].to_numpy(), cases))  # by case name, then night
    cases, metrics = cases[order], metrics[order]
    columns = {c: frame[c].to_numpy(dtype=float)[order] for c in COLUMNS}
    starts = np.flatnonzero(np.r_[True, cases[1:] != cases[:-1], True])
    for start, end in itertools.pairwise(starts):
        case, metric = str(case_names[cases[start]]), str(metric_names[metrics[start]])
        points = {c: values[start:end] for c, values in columns.items()}
        svg = chart(points, metric, len(labels), labels, marks.get((case, metric), []),
                    spans=spans.get((case, metric), []))  # fmt: skip
        out.append(f"<figure>{svg}<figcaption>{html.escape(case)}</figcaption></figure>")
    return out


COLUMNS = ("value", "low", "high", "run", "segment")
WHOLE_UNIT = "x the run's mean"
"""The whole run's axis: its common level as a ratio to the run's mean state."""
