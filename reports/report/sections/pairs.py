"""The report's pair section: the pair matrices of `sendrecv --pairs all` and `distbench pairs` as
heatmaps and tables with the outliers of ranks.csv marked, and each rank's standing as bars and a
table (reports/report/pairs.py builds them, figures/pairs.py draws them)."""

from __future__ import annotations

import pandas as pd

from distbench.reports.load import Loaded
from distbench.reports.render import Section, TableOut, format_number
from distbench.reports.report.figures import pairs as fp
from distbench.reports.report.pairs import pair_matrices, read_ranks
from distbench.reports.report.sections.collectives import display, figure_out, titled


def section_pairs(
    pairs: pd.DataFrame, notes: list[str], loaded: Loaded | None = None
) -> list[Section]:
    """The pair matrices (heatmaps and tables, outliers marked), and where the runs wrote a
    ranks.csv (`distbench pairs`), each rank's standing as bars and a table."""
    if pairs.empty:
        return []
    matrices = pair_matrices(pairs, read_ranks(loaded.runs) if loaded else None)
    figures = figure_out(
        fp.plot_pairs(matrices),
        "fig-sendrecv-pairs.png",
        "algbw (send/recv) or busbw (all_reduce), GB/s, of each pair, src down, dst across, at "
        "the largest size; outliers from ranks.csv outlined in red",
        notes,
        "pairs: no matrix",
    )
    if any(matrix.symmetric for matrix in matrices):  # rows of `distbench pairs`
        figures += figure_out(
            fp.plot_rank_bars(matrices),
            "fig-pairs-ranks.png",
            "each rank's (node's) busbw with a healthy partner (its best pair, ranks.csv); "
            "red: outlier",
            notes,
            "pairs: no ranks.csv next to the pairs rows, so no standings",
        )
    tables = []
    for matrix in matrices:
        marked = {u: f"{u} (outlier)" for u in matrix.outliers}
        shown = matrix.matrix.rename(index=marked, columns=marked).map(format_number)
        frame = shown.reset_index(names=f"src \\ dst {matrix.axis}")
        frame.columns = pd.Index([str(c) for c in frame.columns])
        numeric = tuple(str(c) for c in shown.columns)
        half = " (symmetric: one measurement per pair, both ways)" if matrix.symmetric else ""
        title = f"{matrix.value} GB/s: {matrix.title}{half}"
        tables.append(TableOut(title, frame, numeric=numeric))
        if not matrix.standings.empty:
            standing = display(
                matrix.standings.assign(outlier=matrix.standings["outlier"].map(str).str.lower()),
                {"unit": matrix.axis, "host": "host", "pairs": "pairs", "busbw_GBps":
                 "busbw with a healthy partner GB/s", "robust_z": "robust z", "outlier": "outlier"},
                ("busbw_GBps", "robust_z"),
            )  # fmt: skip
            tables.append(titled(standing, f"Standings: {matrix.title}"))
    return [Section("Every pair", figures=figures, tables=tables)]
