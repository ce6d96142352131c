"""The --reference figure: measured busbw against the expected busbw of a reference file
(report/reference.py reads it)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes

from distbench.reports.report.figures.collectives import (
    STYLE,
    panel_grid,
    shared_legend,
    size_axis,
)
from distbench.reports.report.reference import Reference


def plot_reference(lines: pd.DataFrame, references: list[Reference]) -> Any:
    """Measured busbw vs size (solid) and the expected busbw (black diamonds, dashed between
    two or more) per primitive and world size that a reference names, a dotted stroke from each
    expected value to the measured one at its size, labelled with the gap; None when no measured
    row matches one. Sizes as the collectives' figures label them (size_axis: 1K, 64K, 1M)."""
    cases = sorted({(r.primitive, r.world_size) for r in references})
    cases = [
        c for c in cases if len(lines[(lines["primitive"] == c[0]) & (lines["world_size"] == c[1])])
    ]
    if not cases:
        return None
    with sns.axes_style(STYLE):
        figure, axes = panel_grid(len(cases))
        for axis, (primitive, world) in zip(axes, cases, strict=True):
            measured = lines[(lines["primitive"] == primitive) & (lines["world_size"] == world)]
            for (series, mode), group in measured.groupby(["series", "mode"], observed=True):
                group = group.sort_values("size_bytes")
                label = f"{series} {mode}"
                axis.plot(group["size_bytes"], group["busbw_GBps"], marker="o", markersize=5,
                          label=label)  # fmt: skip
            refs = sorted(
                (r for r in references if (r.primitive, r.world_size) == (primitive, world)),
                key=lambda r: r.size_bytes,
            )
            sizes = [float(r.size_bytes) for r in refs]
            axis.plot(
                sizes,
                [r.busbw_GBps for r in refs],
                linestyle="--" if len(refs) > 1 else "none",
                color="black",
                marker="D",
                markersize=7,
                markerfacecolor="white",
                markeredgewidth=1.5,
                zorder=3,
                label="expected (--reference)",
            )
            right = max([*sizes, *measured["size_bytes"].astype(float)])
            for ref in refs:
                hit = measured[measured["size_bytes"] == ref.size_bytes]["busbw_GBps"]
                if len(hit):
                    gap_label(axis, ref, float(hit.max()), at_right=ref.size_bytes >= right)
            size_axis(axis, [*sizes, *measured["size_bytes"]])
            axis.set_ylim(bottom=0)
            axis.set_title(f"{primitive}, {world} ranks", fontsize="medium")
            axis.set_ylabel("busbw (GB/s)")
        shared_legend(figure, axes, "measured (series, mode) and expected")
    return figure


def gap_label(axis: Axes, ref: Reference, measured: float, at_right: bool) -> None:
    """A dotted stroke from the expected busbw to the measured one at the reference's size, and
    the gap in % beside its middle: on its left at the panel's largest size, where a label on the
    right would run off the panel."""
    gap = (measured / ref.busbw_GBps - 1) * 100
    axis.plot([ref.size_bytes] * 2, [ref.busbw_GBps, measured], ":", color="0.3", linewidth=1.2)
    axis.annotate(
        f"{gap:+.0f} %",
        (ref.size_bytes, (ref.busbw_GBps + measured) / 2),
        xytext=(-7 if at_right else 7, 0),
        textcoords="offset points",
        ha="right" if at_right else "left",
        va="center",
        fontsize="small",
        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.8},
    )
