"""The --reference figure: measured busbw against the expected busbw of a reference file
(report/reference.py reads it)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from distbench.reports.report.figures.collectives import panel_grid
from distbench.reports.report.reference import Reference


def plot_reference(lines: pd.DataFrame, references: list[Reference]) -> Any:
    """Measured busbw vs size (solid) and the expected busbw (dashed, gap labelled) per primitive
    and world size that a reference names; None when no measured row matches one."""
    cases = sorted({(r.primitive, r.world_size) for r in references})
    cases = [
        c for c in cases if len(lines[(lines["primitive"] == c[0]) & (lines["world_size"] == c[1])])
    ]
    if not cases:
        return None
    figure, axes = panel_grid(len(cases))
    for axis, (primitive, world) in zip(axes, cases, strict=True):
        measured = lines[(lines["primitive"] == primitive) & (lines["world_size"] == world)]
        for (series, mode), group in measured.groupby(["series", "mode"], observed=True):
            group = group.sort_values("size_bytes")
            label = f"{series} {mode}"
            axis.plot(group["size_bytes"], group["busbw_GBps"], marker="o", label=label)
        refs = sorted(
            (r for r in references if (r.primitive, r.world_size) == (primitive, world)),
            key=lambda r: r.size_bytes,
        )
        axis.plot(
            [r.size_bytes for r in refs],
            [r.busbw_GBps for r in refs],
            "k--",
            marker="_",
            label="expected",
        )
        for ref in refs:
            hit = measured[measured["size_bytes"] == ref.size_bytes]["busbw_GBps"]
            if len(hit):
                gap = (float(hit.max()) / ref.busbw_GBps - 1) * 100
                axis.annotate(f"{gap:+.0f} %", (ref.size_bytes, ref.busbw_GBps), fontsize="small")
        axis.set_xscale("log", base=2)
        axis.set_title(f"{primitive}, {world} ranks", fontsize="medium")
        axis.set_xlabel("size (bytes)")
        axis.set_ylabel("busbw (GB/s)")
        axis.legend(fontsize="small")
    return figure
