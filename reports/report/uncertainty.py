"""Numbers printed with their 95 % intervals: '1.23 [0.98, 1.51]', and speedups, the one way the
headline and every table print them: '1.32× [<0.1×, >10×]'.

The report's speedup intervals and verdicts are no longer computed here (0.2.0 bootstrapped the
trials of each run and widened by a between-row tau, which could not see a shift common to a
launch): they come from the statistical core through compare's own comparison, the launch as the
unit (reports/report/verdicts.py, distbench.stats).
"""

# ruff: noqa: RUF001, RUF002  (the multiplication sign on purpose)

from __future__ import annotations

import math

import pandas as pd

from distbench.parse import format_significant
from distbench.reports.render import format_number
from distbench.stats.verdict import CONFIDENCE, level_text

TIMES = "\u00d7"
"""The multiplication sign every speedup of the report is written with (the terminal's x is
ASCII)."""
SPAN = 10.0
"""Speedups beyond SPAN× either way print as '>10×' and '<0.1×': an interval that wide says only
that the noise is that wide, and a table's 0.008× beside the headline's <0.1× read as two
findings."""
SPEEDUP_DIGITS = 3
"""Significant digits of a speedup: 0.970× and 1.03× stay apart."""


def speedup_text(value: float) -> str:
    """'1.44×', '0.100×', '>10×', '<0.1×'; '—' for none (NaN)."""
    if value != value:
        return "—"
    if value > SPAN:
        return f">{SPAN:g}×"
    if value < 1 / SPAN:
        return f"<{1 / SPAN:g}×"
    return format_significant(value, SPEEDUP_DIGITS) + "×"


def speedup_interval(value: float, low: float, high: float, level: float = CONFIDENCE) -> str:
    """'1.32× [<0.1×, >10×]', '0.800× [0.700×, 0.950×] at 98.7 %' where the interval is at a
    verdict's level (distbench.stats.verdict.selected_level); the speedup alone without one."""
    if math.isnan(low) or math.isnan(high):
        return speedup_text(value)
    ends = f"[{speedup_text(low)}, {speedup_text(high)}]"
    return f"{speedup_text(value)} {ends}{level_text(level)}"


def speedup_cells(
    values: pd.Series, low: pd.Series, high: pd.Series, level: pd.Series | None = None
) -> pd.Series:
    """speedup_interval of each row: a table's speedup column."""
    levels = level if level is not None else pd.Series(CONFIDENCE, index=values.index)
    text = [
        speedup_interval(*(math.nan if pd.isna(x) else float(x) for x in (v, a, b, c)))
        for v, a, b, c in zip(values, low, high, levels, strict=True)
    ]
    return pd.Series(text, index=values.index, dtype=object)


def with_interval(
    values: pd.Series, low: pd.Series, high: pd.Series, level: pd.Series | None = None
) -> pd.Series:
    """'1.23 [0.98, 1.51]': a number with its 95 % interval, or '1.23 [0.95, 1.58] at 98.7 %'
    where `level` says another; the number alone without one. Speedups: speedup_cells."""
    levels = level if level is not None else pd.Series(CONFIDENCE, index=values.index)
    text = [
        format_number(v, 3)
        + (f" [{format_number(a, 3)}, {format_number(b, 3)}]" if pd.notna(a) else "")
        + (level_text(float(c)) if pd.notna(a) else "")
        for v, a, b, c in zip(values, low, high, levels, strict=True)
    ]
    return pd.Series(text, index=values.index, dtype=object)
