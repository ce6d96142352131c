"""The Bencher Metric Format (https://bencher.dev/docs/reference/bencher-metric-format): an
object of benchmarks, each an object of measures, each {value, lower_value?, upper_value?}
(its JSON schema requires `value`, a number). `bencher run --adapter json --file FILE` reads it.

    {"all_reduce 1K float32 n=2 op=sum mode=throughput backend=gloo device=cpu": {
        "latency": {"value": 2109511.6, "lower_value": ..., "upper_value": ...},
        "busbw-gbps": {"value": 0.000485}}}

A benchmark is a row, named by its case (rows.case_name: no run id, so runs line up).
`latency` is Bencher's built-in measure, in nanoseconds: the row's time_us_p50 x 1000, its
bounds the p50's 95 % confidence interval (ci_low_us, ci_high_us) where the row has one.
`busbw-gbps` is busbw_GBps (a measure Bencher creates on first use); absent at world size 1.
"""

from __future__ import annotations

import json

from distbench.reports.export.rows import ExportRun, case_name, check_unique, number
from distbench.reports.runs import Row

LATENCY = "latency"
"""Bencher's built-in Latency measure (nanoseconds)."""
BUSBW = "busbw-gbps"
"""distbench's bus bandwidth, GB/s (1e9 B/s)."""


def render_bmf(run: ExportRun) -> str:
    names = [case_name(row) for row in run.rows]
    check_unique(names)
    document: dict[str, dict[str, dict[str, float]]] = {}
    for name, row in zip(names, run.rows, strict=True):
        measures: dict[str, dict[str, float]] = {}
        p50 = number(row, "time_us_p50")
        if p50 is not None:
            measures[LATENCY] = {"value": p50 * 1e3, **bounds(row)}
        busbw = number(row, "busbw_GBps")
        if busbw is not None:
            measures[BUSBW] = {"value": busbw}
        if measures:
            document[name] = measures
    return json.dumps(document, indent=1) + "\n"


def bounds(row: Row) -> dict[str, float]:
    """lower_value and upper_value (ns) from the p50's 95 % interval; none without one."""
    low, high = number(row, "ci_low_us"), number(row, "ci_high_us")
    if low is None or high is None:
        return {}
    return {"lower_value": low * 1e3, "upper_value": high * 1e3}
