"""Numbers printed with their 95 % intervals: '1.23 [0.98, 1.51]'.

The report's speedup intervals and verdicts are no longer computed here (0.2.0 bootstrapped the
trials of each run and widened by a between-row tau, which could not see a shift common to a
launch): they come from the statistical core through compare's own comparison, the launch as the
unit (reports/report/verdicts.py, distbench.stats).
"""

from __future__ import annotations

import pandas as pd

from distbench.reports.render import format_number
from distbench.stats.verdict import CONFIDENCE, level_text


def with_interval(
    values: pd.Series, low: pd.Series, high: pd.Series, level: pd.Series | None = None
) -> pd.Series:
    """'1.23 [0.98, 1.51]': a number with its 95 % interval, or '1.23 [0.95, 1.58] at 98.7 %'
    where `level` says another (a verdict's: distbench.stats.verdict.selected_level); the
    number alone without one."""
    levels = level if level is not None else pd.Series(CONFIDENCE, index=values.index)
    text = [
        format_number(v, 3)
        + (f" [{format_number(a, 3)}, {format_number(b, 3)}]" if pd.notna(a) else "")
        + (level_text(float(c)) if pd.notna(a) else "")
        for v, a, b, c in zip(values, low, high, levels, strict=True)
    ]
    return pd.Series(text, index=values.index, dtype=object)
