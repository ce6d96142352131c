"""The report's `distbench pipeline` section: step time against microbatches per strategy and
world size, the measured bubble next to GPipe's theory, and the table of every row."""

from __future__ import annotations

import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from distbench.reports.render import Section
from distbench.reports.report.figures.collectives import (
    STYLE,
    line_palette,
    new_figure,
    shared_legend,
)
from distbench.reports.report.sections.collectives import CASE_NAMES, display, figure_out, titled

THEORY_DASHES: tuple[tuple[int, tuple[float, ...]], ...] = (
    (0, (4.0, 2.0)),
    (0, (1.0, 1.5)),
    (0, (6.0, 2.0, 1.0, 2.0)),
    (0, (2.0, 2.0)),
    (0, (6.0, 2.0, 1.0, 2.0, 1.0, 2.0)),
    (0, (8.0, 3.0)),
)
"""GPipe's theory lines, one per world size: dashed, dotted, dash-dot ... (each a dash pattern
that a short legend handle still shows), so two world sizes' lines tell apart."""
THEORY_GREYS = ("0.25", "0.45", "0.6")
"""Their greys, darkest first: a second difference beside the dashes."""


def plot_pipeline(rows: pd.DataFrame) -> Figure | None:
    """Left: mean step time vs M, one line per strategy, world size and source. Right: the
    measured bubble vs M on the same lines, GPipe's (W - 1) / (M + W - 1) per W in grey, a dash
    pattern (and shade) per W, each with its own legend entry."""
    if rows.empty or rows["microbatches"].nunique() < 2:
        return None
    series = (
        rows["strategy"]
        + " n="
        + rows["world_size"].astype(int).astype(str)
        + (" · " + rows["source"].astype(str) if rows["source"].nunique() > 1 else "")
    )
    points = rows.assign(series=series, step_ms=rows["step_time_us_mean"] / 1e3)
    palette = line_palette(points["series"])
    with sns.axes_style(STYLE):
        fig = new_figure(1, 2)
        left, right = fig.subplots(1, 2, squeeze=True)
        for name, line in points.groupby("series", sort=True):
            line = line.sort_values("microbatches")
            color = palette[str(name)]
            left.plot(line["microbatches"], line["step_ms"], "-o", color=color, label=str(name))
            right.plot(line["microbatches"], line["bubble"], "-o", color=color, label=str(name))
        for i, (world_size, line) in enumerate(points.groupby("world_size", sort=True)):
            theory = line.drop_duplicates("microbatches").sort_values("microbatches")
            dashes, shade = (
                THEORY_DASHES[i % len(THEORY_DASHES)],
                THEORY_GREYS[i % len(THEORY_GREYS)],
            )
            right.plot(
                theory["microbatches"],
                theory["bubble_theory"],
                linestyle=dashes,
                color=shade,
                label=f"GPipe theory n={world_size}",
            )
        ticks = sorted(points["microbatches"].unique())
        for ax, label in ((left, "mean step time (ms)"), (right, "bubble (idle share)")):
            ax.set_xscale("log", base=2)
            ax.set_xticks(ticks, [str(int(t)) for t in ticks])
            ax.set_xlabel("microbatches M")
            ax.set_ylabel(label)
        right.set_ylim(0, 1)
        shared_legend(fig, [left, right], "strategy, ranks")
    return fig


def megabytes(rows: pd.DataFrame, column: str) -> pd.Series:
    """`column`'s bytes a step in MB (1e6 B), as the DDP table's all-gathered MB/step, not a raw
    byte count; NaN where a row (or an older run) has none."""
    if column not in rows:
        return pd.Series(float("nan"), index=rows.index)
    return pd.to_numeric(rows[column], errors="coerce") / 1e6


def section_pipeline(rows: pd.DataFrame, notes: list[str]) -> list[Section]:
    if rows.empty:
        return []
    figures = figure_out(
        plot_pipeline(rows),
        "fig-pipeline.png",
        "mean step time and measured bubble (1 - a stage's busy time / step, mean over stages) "
        "against microbatches; grey dashed or dotted: GPipe's (W - 1) / (M + W - 1), one line per "
        "world size W",
        notes,
        "pipeline figure: the pipeline rows hold a single number of microbatches",
    )
    ordered = rows.sort_values(["source", "world_size", "microbatches", "strategy"])
    table = display(
        ordered.assign(
            step_ms=ordered["step_time_us_mean"] / 1e3,
            sent_MB=megabytes(ordered, "bytes_per_step"),
            tensor_MB=megabytes(ordered, "tensor_bytes_per_step"),
        ),
        {
            **{k: v for k, v in CASE_NAMES.items() if k != "primitive"},
            "model": "model",
            "params": "params",
            "stage_params": "params per stage",
            "batch_size": "batch",
            "microbatches": "M",
            "step_ms": "step mean ms",
            "samples_per_s": "samples/s",
            "sent_MB": "MB/step",
            "tensor_MB": "MB/step of the tensors",
            "bubble": "bubble",
            "bubble_p50": "bubble (median window)",
            "bubble_theory": "bubble theory",
            "max_param_diff": "max param diff",
        },
        (
            "step_ms",
            "samples_per_s",
            "sent_MB",
            "tensor_MB",
            "bubble",
            "bubble_p50",
            "bubble_theory",
            "max_param_diff",
        ),
    )
    return [
        Section(
            "Pipeline parallelism",
            "One stage per rank. Every strategy must match a single-process run of the whole "
            "model on the same batches to float rounding: see max param diff.",
            figures=figures,
            tables=[titled(table, "Pipeline strategies")],
        )
    ]
