"""Speedups of every source over the baseline (the first source), per matched row, and their
summary per case. Each row keeps the run and measurement of both sides (`run`, `measurement`,
`run_base`, `measurement_base`) so that uncertainty.py can find their samples.

speedup = baseline p50 time / this source's p50 time: above 1 is faster.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from distbench.collectors.schema import COMM_MATCH_KEY, DDP_MATCH_KEY
from distbench.parse import format_size
from distbench.reports.analysis import CASE, series_names
from distbench.reports.uncertainty import FASTER, SAME, SLOWER
from distbench.reports.versions import version_keys

ROW_OF_CASE = {
    "run": pd.NamedAgg("run", "first"),
    "measurement": pd.NamedAgg("measurement", "first"),
}
"""Which run and measurement a case's row is: one per source and case (repeats.py)."""


def matched_rows(frame: pd.DataFrame, key: list[str], column: str) -> pd.DataFrame:
    """Rows of the non-baseline sources merged with the baseline's on `key`, with `speedup`."""
    sources = list(frame["source"].cat.categories) if len(frame) else []
    if len(sources) < 2:
        return pd.DataFrame()
    by = ["source", *key, *version_keys(frame)]
    grouped = frame.groupby(by, observed=True)
    rows = grouped.agg(**ROW_OF_CASE, **{column: pd.NamedAgg(column, "median")}).reset_index()
    base = rows[rows["source"] == sources[0]].drop(columns="source")
    matched = rows[rows["source"] != sources[0]].merge(base, on=key, suffixes=("", "_base"))
    matched["speedup"] = matched[f"{column}_base"] / matched[column]
    return matched


def comm_ratios(lines: pd.DataFrame) -> pd.DataFrame:
    """Speedup of every source over the baseline (first) source, per matched measurement."""
    matched = matched_rows(lines, list(COMM_MATCH_KEY), "time_us_p50")
    if matched.empty:
        return matched
    matched["series"] = series_names(matched, with_source=True)
    matched["source"] = matched["source"].astype(str)
    return matched


def ddp_ratios(ddp: pd.DataFrame) -> pd.DataFrame:
    """Step-time speedup of every source over the baseline, per matched DDP configuration."""
    matched = matched_rows(ddp, list(DDP_MATCH_KEY), "step_time_us_p50")
    if len(matched):
        matched["source"] = matched["source"].astype(str)
    return matched


def ratio_summary(ratios: pd.DataFrame) -> pd.DataFrame:
    """Per source x case: sizes matched, the speedup at the largest size, the range, how many
    sizes were called faster or slower (uncertainty.judge_speedups), and the geometric mean over
    those sizes only (NaN when none): a mean over indistinguishable sizes would average noise,
    and one launch shifts every size of a case alike, so its interval would not shrink."""
    records = []
    for key, group in ratios.groupby(CASE, sort=True):
        group = group.sort_values("size_bytes")
        last = group.iloc[-1]
        verdicts = group["verdict"] if "verdict" in group else pd.Series(SAME, index=group.index)
        called = group[verdicts.isin((FASTER, SLOWER))]["speedup"]
        records.append(
            {
                **dict(zip(CASE, key, strict=True)),
                "sizes": len(group),
                "largest": format_size(int(last["size_bytes"])),
                "speedup_largest": float(last["speedup"]),
                "speedup_geomean": float(np.exp(np.log(called).mean()))
                if len(called)
                else math.nan,
                "speedup_min": float(group["speedup"].min()),
                "speedup_max": float(group["speedup"].max()),
                "faster": int((verdicts == FASTER).sum()),
                "slower": int((verdicts == SLOWER).sum()),
            }
        )
    return pd.DataFrame.from_records(records)
