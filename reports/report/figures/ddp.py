"""The DDP figures of a report: throughput and scaling efficiency over world size, and where a
step's time goes (compute vs communication) per strategy. Same conventions as collectives.py."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.typing import ColorType

from distbench.reports.report.figures.collectives import (
    LINESTYLES,
    MARKERS,
    STYLE,
    new_figure,
    shared_legend,
)

STRATEGY_COLOURS: list[ColorType] = [*sns.color_palette("tab10"), (0.0, 0.0, 0.0)]
"""tab10 and black: 11 colours that tell apart, one per strategy that runs on CPU."""


def strategy_styles(strategies: Iterable[str]) -> dict[str, tuple[ColorType, str]]:
    """A (colour, marker) per strategy, in sorted order: STRATEGY_COLOURS and MARKERS side by
    side, so no two strategies share both (up to 77), and up to 11 (every strategy on CPU)
    differ in colour alone. (line_palette's evenly spaced hues past 10 names gave neighbours
    in the sorted list, ddp-fp16 and ddp-nocomm, fsdp and fsdp-reshard-false, nearly one
    colour; and with two runs a strategy's two lines had unrelated colours.)"""
    colors = STRATEGY_COLOURS
    ordered = sorted({str(s) for s in strategies})
    return {
        name: (colors[i % len(colors)], MARKERS[i % len(MARKERS)]) for i, name in enumerate(ordered)
    }


def plot_ddp_scaling(ddp: pd.DataFrame) -> Figure | None:
    """DDP samples/s and scaling efficiency vs world size, one line per strategy and `line`
    (analysis.ddp_lines: the source and any configuration that differs, e.g. device); each
    strategy has a colour and marker of its own (strategy_styles), each `line` a line style."""
    if ddp.empty or ddp["world_size"].nunique() < 2:
        return None
    lines = sorted(ddp["line"].unique())
    series = ddp["strategy"] + (" · " + ddp["line"] if len(lines) > 1 else "")
    points = (
        ddp.assign(series=series)
        .groupby(["series", "line", "strategy", "world_size"], observed=True)[
            ["samples_per_s", "scaling_efficiency"]
        ]
        .mean()
        .reset_index()
    )
    styles = strategy_styles(points["strategy"])
    has_efficiency = points["scaling_efficiency"].notna().any()
    panels = [("samples_per_s", "samples/s (whole job)")]
    if has_efficiency:
        panels.append(("scaling_efficiency", "scaling efficiency"))
    with sns.axes_style(STYLE):
        fig = new_figure(1, len(panels))
        axes = fig.subplots(1, len(panels), squeeze=False)[0]
        for ax, (metric, label) in zip(axes, panels, strict=True):
            for name, line in points.groupby("series", sort=True):
                line = line.sort_values("world_size")
                color, marker = styles[str(line["strategy"].iloc[0])]
                ax.plot(
                    line["world_size"],
                    line[metric],
                    LINESTYLES[lines.index(line["line"].iloc[0]) % len(LINESTYLES)],
                    marker=marker,
                    markersize=5,
                    color=color,
                    label=str(name),
                )
            ax.set_xticks(sorted(points["world_size"].unique()))
            ax.set_xlabel("world size (ranks)")
            ax.set_ylabel(label)
            if metric == "scaling_efficiency":
                ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
        shared_legend(fig, axes, "strategy · line" if len(lines) > 1 else "strategy")
        fig.suptitle("DDP training throughput")
    return fig


def plot_ddp_split(split: pd.DataFrame) -> Figure | None:
    """Stacked bars per strategy: compute (the mean step of its comm_baseline, e.g. ddp-nocomm)
    + communication (the rest), in ms; one panel per configuration and world size (`panel`), all
    on one y scale (two clusters' bars compare by height). Where strategies of a panel subtract
    different baselines, each bar names its own.

    `split`: panel, strategy, comm_baseline, compute_ms, comm_ms (one row per bar), from
    analysis.ddp_split.
    """
    if split.empty:
        return None
    panels = list(split.groupby("panel", sort=True))
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    colors = sns.color_palette("deep", 2)
    baselines = sorted(split["comm_baseline"].unique())
    compute = f"compute ({baselines[0]} mean)" if len(baselines) == 1 else "compute (baseline mean)"
    with sns.axes_style(STYLE):
        fig = new_figure(rows, cols)
        axes = list(fig.subplots(rows, cols, squeeze=False, sharey=True).flat)  # one scale
        for ax, (title, panel) in zip(axes, panels, strict=False):
            x = np.arange(len(panel))
            ax.bar(x, panel["compute_ms"], color=colors[0], label=compute)
            ax.bar(
                x,
                panel["comm_ms"],
                bottom=panel["compute_ms"],
                color=colors[1],
                label="communication (the rest)",
            )
            ticks = panel["strategy"]
            if len(baselines) > 1:  # which baseline each bar subtracts
                ticks = ticks + " (" + panel["comm_baseline"] + ")"
            ax.set_xticks(x, ticks, rotation=30, ha="right")
            ax.set_ylabel("mean step time (ms)")
            ax.set_title(str(title), fontsize="medium")
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        shared_legend(fig, fig.axes, "step time")
        fig.suptitle("DDP strategies: where the step time goes")
    return fig
