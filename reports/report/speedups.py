"""Speedups of every source over the baseline (the first source), per matched row, and their
summary per case. Each row keeps the run and measurement of both sides (`run`, `measurement`,
`run_base`, `measurement_base`); reports/report/verdicts.py adds each row's verdict.

speedup = baseline time / this source's time, by report --metric (p50 unless said): above 1
is faster.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from distbench.collectors.schema import COMM_MATCH_KEY, DDP_MATCH_KEY
from distbench.parse import format_asked_size
from distbench.reports.report.analysis import CASE, series_names
from distbench.reports.report.verdicts import SourceVerdict, speedup_of, state_text
from distbench.reports.report.versions import version_keys
from distbench.stats.verdict import IMPROVED, REGRESSED

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
    asked = {"requested_bytes": pd.NamedAgg("requested_bytes", "first")}  # the size's label
    aggs = {**ROW_OF_CASE, **(asked if "requested_bytes" in frame else {})}
    rows = grouped.agg(**aggs, **{column: pd.NamedAgg(column, "median")}).reset_index()
    base = rows[rows["source"] == sources[0]].drop(columns="source")
    matched = rows[rows["source"] != sources[0]].merge(base, on=key, suffixes=("", "_base"))
    matched["speedup"] = matched[f"{column}_base"] / matched[column]
    return matched


def comm_ratios(lines: pd.DataFrame, column: str = "time_us_p50") -> pd.DataFrame:
    """Speedup of every source over the baseline (first) source, per matched measurement, on
    `column` (a time: report --metric)."""
    matched = matched_rows(lines, list(COMM_MATCH_KEY), column)
    if matched.empty:
        return matched
    matched["series"] = series_names(matched, with_source=True)
    matched["source"] = matched["source"].astype(str)
    return matched


def ddp_ratios(ddp: pd.DataFrame, column: str = "step_time_us_p50") -> pd.DataFrame:
    """Step-time speedup of every source over the baseline, per matched DDP configuration."""
    matched = matched_rows(ddp, list(DDP_MATCH_KEY), column)
    if len(matched):
        matched["source"] = matched["source"].astype(str)
    return matched


def case_estimate(
    group: pd.DataFrame, verdict: SourceVerdict | None
) -> tuple[float, float, float, str, float]:
    """Every size of one case together: the core's estimate of the band that holds exactly these
    rows (judged without the relative contrast: the geometric mean of their speedups, with its
    95 % interval, the launch as the unit) and compare's state of that band; without one, the
    plain geometric mean of the sizes' speedups and no interval. Last: the interval's level
    (0.95, or the band's verdict's: distbench.stats.verdict.selected_level)."""
    speedups = group["speedup"].to_numpy(dtype=float)
    plain = float(np.exp(np.log(speedups).mean())) if len(speedups) else math.nan
    members = group["row_index"] if "row_index" in group else pd.Series(-1, index=group.index)
    if verdict is None or (members < 0).any():
        return plain, math.nan, math.nan, "", math.nan
    judged, raw = verdict.band(members.astype(int).tolist())
    if raw is None or judged is None or raw.shift is None:
        return plain, math.nan, math.nan, "", math.nan
    speedup, low, high = speedup_of(raw)
    return speedup, low, high, state_text(judged), raw.level


def ratio_summary(
    ratios: pd.DataFrame, verdicts: dict[str, SourceVerdict] | None = None
) -> pd.DataFrame:
    """Per source x case: sizes matched, the speedup at the largest size, every size together
    (case_estimate: the geometric mean over all of them with its interval and verdict; 0.2.0
    averaged only the sizes already called, which overstated small effects), the sizes improved
    (faster) and regressed (slower), and the range."""
    records = []
    for key, group in ratios.groupby(CASE, sort=True, observed=True):
        group = group.sort_values("size_bytes")
        last = group.iloc[-1]
        asked = last.get("requested_bytes")  # the largest size's label: the size asked for
        states = group["state"] if "state" in group else pd.Series("", index=group.index)
        verdict = (verdicts or {}).get(str(last["source"]))
        geomean, low, high, state, level = case_estimate(group, verdict)
        records.append(
            {
                **dict(zip(CASE, key, strict=True)),
                "sizes": len(group),
                "largest": format_asked_size(last["size_bytes"], asked),
                "speedup_largest": float(last["speedup"]),
                "speedup_geomean": geomean,
                "geomean_low": low,
                "geomean_high": high,
                "geomean_level": level,
                "case_verdict": state,
                "speedup_min": float(group["speedup"].min()),
                "speedup_max": float(group["speedup"].max()),
                "improved": int((states == IMPROVED).sum()),
                "regressed": int((states == REGRESSED).sum()),
            }
        )
    return pd.DataFrame.from_records(records)
