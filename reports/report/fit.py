"""The latency-bandwidth fit of each line of a report: one fit per group of communication rows
(p50 time over size), as a table. The model, its fit and its intervals live in the statistical
core (distbench.stats.fit, whose docstring says how alpha and beta are fitted and what their 95 %
intervals hold); this module only groups the rows and lays the fits out as columns.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from distbench.parse import asked_size
from distbench.stats.fit import MAX_REL_RMS, Fit, fit_latency_bandwidth

__all__ = [
    "FIT_COLUMNS",
    "MAX_REL_RMS",
    "Fit",
    "fit_columns",
    "fit_groups",
    "fit_latency_bandwidth",
]

FIT_COLUMNS = [
    "alpha_us",
    "beta_GBps",
    "busbw_beta_GBps",
    "rel_rms",
    "rel_max",
    "noise",
    "alpha_low",
    "alpha_high",
    "beta_low",
    "beta_high",
    "points",
    "df",
    "split",
    "alpha_from_bytes",
    "alpha_to_bytes",
    "beta_from_bytes",
    "beta_to_bytes",
]


SIZE_ENDS = ("alpha_from_bytes", "alpha_to_bytes", "beta_from_bytes", "beta_to_bytes")
"""The sizes each end's fit came from, as asked for (parse.asked_size: the 1K an all_gather at 3
ranks measures as 1,020 bytes), so the table names them as every other table does."""


RANGE_COLUMNS = {
    "alpha_interval": ("alpha_low", "alpha_high"),
    "beta_interval": ("beta_low", "beta_high"),
    "alpha_sizes": ("alpha_from_bytes", "alpha_to_bytes"),
    "beta_sizes": ("beta_from_bytes", "beta_to_bytes"),
}
"""Fit's (low, high) fields -> their two columns."""


def fit_columns(fit: Fit) -> dict[str, Any]:
    """FIT_COLUMNS of one fit but busbw_beta_GBps (the group's busbw factor makes it)."""
    names = ("alpha_us", "beta_GBps", "rel_rms", "rel_max", "noise", "points", "df", "split")
    columns: dict[str, Any] = {name: getattr(fit, name) for name in names}
    for field, (low, high) in RANGE_COLUMNS.items():
        columns[low], columns[high] = getattr(fit, field)
    return columns


def fit_groups(rows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """One fit per group of communication rows (p50 time over size_bytes).

    Returns the group columns plus FIT_COLUMNS (busbw_beta_GBps: beta x the group's busbw
    factor); groups with fewer than two sizes are left out. The groups are taken as positions
    into the columns' arrays (a frame per group cost ~1 ms: 800 groups in a 10,000-row report).
    """
    grouped = rows.groupby(by, sort=True, dropna=False, observed=True)
    order = np.argsort(grouped.ngroup().to_numpy(), kind="stable")  # by group, in frame order
    counts = grouped.size()  # in group-number order
    ends = np.cumsum(counts.to_numpy())
    sizes, times = rows["size_bytes"].to_numpy(), rows["time_us_p50"].to_numpy()
    factors = rows["busbw_factor"].to_numpy()
    asked = rows["requested_bytes"].to_numpy() if "requested_bytes" in rows else None
    records = []
    for key, end, count in zip(counts.index, ends, counts, strict=True):
        at = order[end - count : end]
        at = at[times[at] > 0]
        if len(np.unique(sizes[at])) < 2:
            continue
        fit = fit_latency_bandwidth(sizes[at].tolist(), times[at].tolist())
        factor = float(factors[at[0]])
        values = key if isinstance(key, tuple) else (key,)
        busbw_beta = fit.beta_GBps * factor if factor > 0 else math.nan
        columns = fit_columns(fit)
        if asked is not None:
            request = dict(zip(sizes[at].tolist(), asked[at].tolist(), strict=True))
            for column in SIZE_ENDS:
                columns[column] = asked_size(int(columns[column]), request.get(columns[column]))
        records.append(
            {**dict(zip(by, values, strict=True)), **columns, "busbw_beta_GBps": busbw_beta}
        )
    return pd.DataFrame.from_records(records, columns=[*by, *FIT_COLUMNS])
