"""One trend panel per case, as inline SVG: its median and its rate night by night, the night's
spread as a band, change points as red (regression) or green (improvement) lines, a cut in the
column's definition as a grey dashed line, runs labelled by date and git revision (every point's
tooltip; the axis names the first, the last and each change point's run).

Why SVG by hand rather than matplotlib, which draws report's figures: a matplotlib panel took
0.58 s to save on this box, so 500 cases would take 5 minutes; these take milliseconds, and the
page stays one file without scripts (docs/history.md).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import pandas as pd

from distbench.reports.history_load import METRIC_BY_NAME

if TYPE_CHECKING:
    from distbench.reports.history import History

REGRESSION, IMPROVEMENT, CUT, LINE, BAND = "#cf222e", "#1a7f37", "#8c959f", "#0969da", "#b6e3ff"
WIDTH, HEIGHT, LEFT, TOP, BOTTOM = 720, 110, 70, 8, 22


def scale(values: list[float], low: float, high: float, size: float) -> list[float]:
    span = (high - low) or 1.0
    return [TOP + size * (1.0 - (v - low) / span) for v in values]


def chart(
    points: pd.DataFrame, metric: str, runs: int, labels: list[str], marks: list[tuple[int, str]]
) -> str:
    """One series as an <svg>: x = run position, y = value (linear, the band's range)."""
    plot_w, plot_h = WIDTH - LEFT - 10, HEIGHT - TOP - BOTTOM
    step = plot_w / max(runs - 1, 1)
    x = [LEFT + step * int(r) for r in points["run"]]
    lows, highs = points["low"].fillna(points["value"]), points["high"].fillna(points["value"])
    bottom = float(min(lows.min(), highs.min(), points["value"].min()))
    top = float(max(lows.max(), highs.max(), points["value"].max()))
    y, y_low, y_high = (
        scale(s.tolist(), bottom, top, plot_h) for s in (points["value"], lows, highs)
    )
    band = " ".join(
        f"{a:.1f},{b:.1f}"
        for a, b in [*zip(x, y_high, strict=True), *reversed(list(zip(x, y_low, strict=True)))]
    )
    line = " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(x, y, strict=True))
    parts = [
        f'<svg width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="{html.escape(metric)}">',
        f'<polygon points="{band}" fill="{BAND}" stroke="none"/>',
        f'<polyline points="{line}" fill="none" stroke="{LINE}" stroke-width="1.2"/>',
        f'<text x="2" y="{TOP + 10}" font-size="10">{top:.4g}</text>',
        f'<text x="2" y="{TOP + plot_h}" font-size="10">{bottom:.4g}</text>',
        f'<text x="2" y="{TOP + plot_h / 2 + 4}" font-size="10" font-weight="600">'
        f"{html.escape(metric)} ({html.escape(METRIC_BY_NAME[metric].unit)})</text>",
    ]
    for xi, yi, value, run in zip(x, y, points["value"], points["run"], strict=True):
        tip = html.escape(f"{labels[int(run)]}: {value:.4g}")
        parts.append(
            f'<circle cx="{xi:.1f}" cy="{yi:.1f}" r="1.6" fill="{LINE}"><title>{tip}'
            "</title></circle>"
        )
    cuts = points.loc[points["segment"].diff() > 0, "run"].tolist()
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


def panels(history: History) -> list[str]:
    """An HTML <figure> per case (both its series, one above the other), cases in name order."""
    labels = [run.label for run in history.runs]
    marks: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for cp in history.change_points:
        color = REGRESSION if cp.regression else IMPROVEMENT
        marks.setdefault((cp.case, cp.metric), []).append((cp.position, color))
    out = []
    for case, frame in history.points.groupby("case", sort=True):
        charts = [
            chart(points, str(metric), len(labels), labels, marks.get((str(case), str(metric)), []))
            for metric, points in frame.groupby("metric", sort=False)
        ]
        out.append(
            f"<figure>{''.join(charts)}<figcaption>{html.escape(str(case))}</figcaption></figure>"
        )
    return out
