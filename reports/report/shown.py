"""What the report's figures leave out, said under "What could not be shown": a figure shows every
dtype, mode and size of what its title names, or a note lists the rest.

    dtype = figure_dtype(lines)             # None: every dtype is drawn
    notes += left_out(lines, pairs, ddp, most_sizes=6, dtype=dtype)

Where every dtype would crowd a panel past MOST_LINES lines, the collectives' figures and
fig-compare draw one dtype (figure_dtype). Three figures draw less than every row, on purpose:
fig-scaling draws at most `most_sizes` sizes per panel (spread over the range) and only panels
measured at two or more world sizes;
fig-busbw-vs-size has no line at world size 1 (nothing moves); fig-sendrecv-pairs draws each
ordered pair at the largest size of its matrix, at most pairs.MAX_MATRICES matrices. Every row is
in report.html's table of every row. And DDP rows of several sources that share no configuration
with the baseline are not compared: a note says so. pandas only.
"""

from __future__ import annotations

import pandas as pd

from distbench.collectors.schema import DDP_MATCH_KEY
from distbench.parse import format_size
from distbench.reports.report.analysis import pick_sizes, scaling_panel
from distbench.reports.report.pairs import MATRIX_CASE, MAX_MATRICES, is_pair_row

EVERY_ROW = "every measurement is in report.html's table of every row"

MOST_LINES = 12
"""Lines a panel of fig-time-vs-size, fig-busbw-vs-size or fig-fit holds before the figures keep
one dtype: past a dozen, colours, styles and a legend of as many entries no longer tell lines
apart (a 10,000-row report of 2 runs x 4 world sizes x 5 dtypes drew 40 a panel)."""

PREFERRED_DTYPE = "float32"
"""The dtype kept where it was measured: nccl-tests' default (-d float) and distbench's."""


def lines_per_panel(lines: pd.DataFrame) -> int:
    """The most lines (`series`) one panel (primitive x mode) of the size figures holds."""
    if lines.empty:
        return 0
    return int(lines.groupby(["primitive", "mode"])["series"].nunique().max())


def figure_dtype(lines: pd.DataFrame) -> str | None:
    """The one dtype the figures draw, where drawing every dtype would put more than MOST_LINES
    lines in a panel: float32 where measured, else the dtype of most rows (the first by name of
    a tie); None: every dtype is drawn (one dtype, or few enough lines)."""
    if lines.empty or lines["dtype"].nunique() < 2 or lines_per_panel(lines) <= MOST_LINES:
        return None
    counts = lines["dtype"].astype(str).value_counts()
    if PREFERRED_DTYPE in counts.index:
        return PREFERRED_DTYPE
    return str(min(counts.index, key=lambda name: (-counts[name], name)))


def of_dtype(rows: pd.DataFrame, dtype: str | None) -> pd.DataFrame:
    """The rows a figure draws: those of `dtype` (figure_dtype), or all of them for None."""
    return rows if dtype is None or rows.empty else rows[rows["dtype"].astype(str) == dtype]


def dtype_left_out(lines: pd.DataFrame, dtype: str | None) -> list[str]:
    """The note that the figures keep one dtype, with how crowded they would have been."""
    if dtype is None:
        return []
    rest = sorted(set(lines["dtype"].astype(str)) - {dtype})
    return [
        f"the size, scaling, fit and compare figures draw {dtype} only: with every dtype a "
        f"panel would hold up to {lines_per_panel(lines)} lines (at most {MOST_LINES} tell "
        f"apart); not drawn: {', '.join(rest)} (the tables have every dtype; {EVERY_ROW})"
    ]


def sizes_text(sizes: list[int]) -> str:
    return ", ".join(format_size(int(s)) for s in sorted(set(sizes)))


def scaling_left_out(lines: pd.DataFrame, most_sizes: int) -> list[str]:
    """fig-scaling's panels at one world size, and the sizes of a panel it does not draw."""
    rows = lines[~is_pair_row(lines)]
    if rows.empty:
        return []
    rows = rows.assign(panel=scaling_panel(rows))
    world_sizes = rows.groupby("panel")["world_size"].unique()
    drawn = [panel for panel, sizes in world_sizes.items() if len(sizes) >= 2]
    if not drawn:
        return []  # the report says that no primitive has two world sizes
    notes = [
        f"fig-scaling leaves out {panel}: measured at one world size ({int(sizes[0])} ranks)"
        for panel, sizes in world_sizes.items()
        if len(sizes) < 2
    ]
    for panel in drawn:
        requested = rows.loc[rows["panel"] == panel, "requested_bytes"].astype(int).tolist()
        shown = pick_sizes(requested, most_sizes)
        hidden = sorted(set(requested) - set(shown))
        if hidden:
            notes.append(
                f"fig-scaling draws {len(shown)} of the {len(set(requested))} sizes of {panel} "
                f"({sizes_text(shown)}); not drawn: {sizes_text(hidden)} ({EVERY_ROW})"
            )
    return notes


def busbw_left_out(lines: pd.DataFrame) -> list[str]:
    """fig-busbw-vs-size has no line at world size 1; say so when it draws other lines."""
    one = lines[lines["world_size"] == 1]
    if one.empty or len(one) == len(lines):
        return []
    what = ", ".join(sorted(set(one["primitive"].astype(str))))
    return [f"fig-busbw-vs-size has no line at world size 1 ({what}): nothing moves there"]


def pairs_left_out(pairs: pd.DataFrame) -> list[str]:
    """fig-sendrecv-pairs: the sizes below each matrix's largest, and matrices past the limit."""
    if pairs.empty:
        return []
    notes = []
    group = ["source", *MATRIX_CASE]
    cases = list(pairs.groupby(group, observed=True, dropna=False))
    hidden: set[int] = set()
    for _key, rows in cases:
        sizes = rows["size_bytes"].astype(int)
        hidden |= set(sizes[sizes < sizes.max()])
    if hidden:
        notes.append(
            "fig-sendrecv-pairs draws each ordered pair at its largest size only; the pairs' "
            f"times at {sizes_text(list(hidden))} are not drawn ({EVERY_ROW})"
        )
    if len(cases) > MAX_MATRICES:
        rest = [" · ".join(str(value) for value in key) for key, _rows in cases[MAX_MATRICES:]]
        notes.append(
            f"fig-sendrecv-pairs draws {MAX_MATRICES} of {len(cases)} all-pairs matrices; not "
            f"drawn: {'; '.join(rest)} ({EVERY_ROW})"
        )
    return notes


def ddp_compare_left_out(ddp: pd.DataFrame) -> list[str]:
    """DDP rows in a comparison that cannot be paired with the baseline's (the first source's:
    it measured none of their configurations) are said so."""
    if ddp.empty or len(ddp["source"].cat.categories) < 2:
        return []  # one source: nothing to compare
    baseline = str(ddp["source"].cat.categories[0])
    key = list(DDP_MATCH_KEY)
    base = ddp.loc[ddp["source"] == baseline, key].drop_duplicates()
    others = ddp.loc[ddp["source"] != baseline, key].drop_duplicates()
    if len(base) and len(others.merge(base, on=key)):
        return []
    held = ", ".join(sorted({str(s) for s in ddp["source"]} - {baseline}))
    return [
        f"runs compared: no DDP step time is compared: {held} measured DDP, but no "
        f"configuration (strategy, model, world size ...) that {baseline}, the baseline, measured"
    ]


def left_out(
    lines: pd.DataFrame,
    pairs: pd.DataFrame,
    ddp: pd.DataFrame,
    most_sizes: int,
    dtype: str | None = None,
) -> list[str]:
    """Every note above, for the report's line rows, all-pairs rows and DDP rows; `dtype`: the
    one the figures drew (figure_dtype)."""
    notes = pairs_left_out(pairs) + ddp_compare_left_out(ddp)
    if lines.empty:
        return notes
    shown = dtype_left_out(lines, dtype)
    return shown + scaling_left_out(lines, most_sizes) + busbw_left_out(lines) + notes
