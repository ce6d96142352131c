"""The report's "Is my number OK?" section: the gap to a --reference file's expected busbw, a
table and a figure."""

from __future__ import annotations

import pandas as pd

from distbench.reports.render import FigureOut, Section, TableOut
from distbench.reports.report.figures.reference import plot_reference
from distbench.reports.report.reference import Reference, describe, gap_frame, unmatched
from distbench.reports.report.sections.collectives import figure_out


def section_reference(
    lines: pd.DataFrame, references: list[Reference] | None, notes: list[str]
) -> list[Section]:
    if not references:
        return []
    frame = gap_frame(lines, references) if len(lines) else pd.DataFrame()
    missed = unmatched(lines, references)
    if missed and not frame.empty:  # a typo in one entry is not hidden by the others' matches
        notes.append(
            f"--reference: {len(missed)} of {len(references)} entries match no measured row: "
            + "; ".join(describe(ref) for ref in missed)
        )
    if frame.empty:
        notes.append(
            "--reference: no measured row has a reference's primitive, world size and size"
        )
        return []
    figures: list[FigureOut] = figure_out(
        plot_reference(lines, references),
        "fig-reference.png",
        "measured busbw (solid) against the --reference file's expected busbw (dashed); gap in %",
        notes,
        "--reference: nothing to draw",
    )
    table = TableOut(
        "Gap to the reference", frame, numeric=("busbw GB/s", "expected GB/s", "gap %")
    )
    return [
        Section(
            "Is my number OK?",
            "gap = measured busbw / expected busbw - 1 (negative: below the reference). The "
            "expected figures come from the --reference file, not from distbench.",
            figures=figures,
            tables=[table],
        )
    ]
