"""Numbers printed with their 95 % intervals: '1.23 [0.98, 1.51]'.

The report's speedup intervals and verdicts are no longer computed here (0.2.0 bootstrapped the
trials of each run and widened by a between-row tau, which could not see a shift common to a
launch): they come from the statistical core through compare's own comparison, the launch as the
unit (reports/report/verdicts.py, distbench.stats).
"""

from __future__ import annotations

import pandas as pd

from distbench.reports.render import format_number


def with_interval(values: pd.Series, low: pd.Series, high: pd.Series) -> pd.Series:
    """'1.23 [0.98, 1.51]': a number with its 95 % interval; the number alone without one."""
    text = [
        format_number(v, 3)
        + (f" [{format_number(a, 3)}, {format_number(b, 3)}]" if pd.notna(a) else "")
        for v, a, b in zip(values, low, high, strict=True)
    ]
    return pd.Series(text, index=values.index, dtype=object)
