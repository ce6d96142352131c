"""What the report's figures leave out, said under "What could not be shown": a figure shows every
dtype, mode and size of what its title names, or a note lists the rest.

    chosen = figure_dtypes(lines)           # {}: every dtype is drawn
    notes += left_out(lines, pairs, ddp, most_sizes=6, chosen=chosen)

A panel that every dtype would crowd past MOST_LINES lines draws one dtype, in the collectives'
figures and fig-compare alike (figure_dtypes). Three figures draw less than every row, on purpose:
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
"""Lines a panel of fig-time-vs-size, fig-busbw-vs-size or fig-fit holds before it keeps one
dtype: past a dozen, colours, styles and a legend of as many entries no longer tell lines apart
(a 10,000-row report of 2 runs x 4 world sizes x 5 dtypes drew 40 a panel)."""

PREFERRED_DTYPE = "float32"
"""The dtype a crowded panel keeps where it was measured: nccl-tests' default (-d float)."""

Panel = tuple[str, str]
"""(primitive, mode): a panel of the size, fit and compare figures, a row of fig-scaling's."""


def figure_dtypes(lines: pd.DataFrame) -> dict[Panel, str]:
    """The one dtype each crowded panel draws: where drawing every dtype would put more than
    MOST_LINES lines (`series`) in a panel, float32 if the panel measured it, else its dtype of
    most rows (the first by name of a tie). Panels within the limit, or of one dtype, are not
    named: they draw every row."""
    if lines.empty:
        return {}
    chosen: dict[Panel, str] = {}
    for (primitive, mode), panel in lines.groupby(["primitive", "mode"], sort=True):
        counts = panel["dtype"].astype(str).value_counts()
        if len(counts) < 2 or panel["series"].nunique() <= MOST_LINES:
            continue
        pick = PREFERRED_DTYPE if PREFERRED_DTYPE in counts.index else None
        pick = pick or str(min(counts.index, key=lambda name: (-counts[name], name)))
        chosen[(str(primitive), str(mode))] = pick
    return chosen


def of_dtype(rows: pd.DataFrame, chosen: dict[Panel, str]) -> pd.DataFrame:
    """The rows a figure draws: in a panel of `chosen` (figure_dtypes) only its dtype's."""
    if not chosen or rows.empty:
        return rows
    panels = zip(rows["primitive"].astype(str), rows["mode"].astype(str), strict=True)
    wanted = [chosen.get(panel, "") for panel in panels]
    keep = [
        not want or dtype == want
        for want, dtype in zip(wanted, rows["dtype"].astype(str), strict=True)
    ]
    return rows[keep]


def dtype_left_out(lines: pd.DataFrame, chosen: dict[Panel, str]) -> list[str]:
    """The note that crowded panels keep one dtype: which, where, and what they leave out."""
    if not chosen:
        return []
    panels = lines.groupby(["primitive", "mode"])
    where: dict[str, list[str]] = {}
    for panel, dtype in chosen.items():
        where.setdefault(dtype, []).append(" · ".join(panel))
    kept = "; ".join(
        f"{dtype} in {'every panel' if len(names) == panels.ngroups else ', '.join(names)}"
        for dtype, names in sorted(where.items())
    )
    crowded = max(panels.get_group(panel)["series"].nunique() for panel in chosen)
    rest = sorted(
        {d for panel in chosen for d in panels.get_group(panel)["dtype"].astype(str)}
        - set(chosen.values())
    )
    return [
        f"where every dtype would put more than {MOST_LINES} lines in a panel (up to "
        f"{crowded}), the size, scaling, fit and compare figures draw one dtype: {kept}; not "
        f"drawn there: {', '.join(rest)} (the tables have every dtype; {EVERY_ROW})"
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
    chosen: dict[Panel, str] | None = None,
) -> list[str]:
    """Every note above, for the report's line rows, all-pairs rows and DDP rows; `chosen`: the
    crowded panels' dtypes (figure_dtypes)."""
    notes = pairs_left_out(pairs) + ddp_compare_left_out(ddp)
    if lines.empty:
        return notes
    shown = dtype_left_out(lines, chosen or {})
    return shown + scaling_left_out(lines, most_sizes) + busbw_left_out(lines) + notes
