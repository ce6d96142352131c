"""github-action-benchmark's `customSmallerIsBetter` input
(https://github.com/benchmark-action/github-action-benchmark): a JSON list of
{name, unit, value, range?, extra?}, `value` a number, `range` and `extra` strings; the action
keeps these five keys and reads `range` as '± N'.

    [{"name": "all_reduce 1K float32 n=2 op=sum mode=throughput backend=gloo device=cpu",
      "unit": "us", "value": 2109.51, "range": "± 103.8", "extra": "..."}]

One entry per row, named by its case (rows.case_name: no run id, so nights line up); `value` is
time_us_p50 (the slowest rank's median time per op: smaller is better); `range` half the width
of that p50's 95 % confidence interval, absent where the row has none or where the interval is
lopsided (one side over ASYMMETRY_MAX times the other); `extra` the interval itself, busbw and
the samples behind the number.
"""

from __future__ import annotations

import json
from typing import Any

from distbench.reports.export.rows import ExportRun, case_name, check_unique, number
from distbench.reports.runs import Row


def render_gab(run: ExportRun) -> str:
    names = [case_name(row) for row in run.rows]
    check_unique(names)
    entries = [entry(name, row) for name, row in zip(names, run.rows, strict=True)]
    return json.dumps([e for e in entries if e is not None], indent=1) + "\n"


ASYMMETRY_MAX = 3.0
"""A `range` is written where neither side of the interval is more than this many times the
other: the action reads it as `value ± N`, and 203 ± 469 for an interval of 181 .. 1119 reads
as reaching -266 us."""


def symmetric_enough(value: float, low: float, high: float) -> bool:
    below, above = value - low, high - value
    if below < 0 or above < 0:
        return False
    return max(below, above) <= ASYMMETRY_MAX * max(min(below, above), 1e-12)


def entry(name: str, row: Row) -> dict[str, Any] | None:
    p50 = number(row, "time_us_p50")
    if p50 is None:
        return None
    found: dict[str, Any] = {"name": name, "unit": "us", "value": p50}
    low, high = number(row, "ci_low_us"), number(row, "ci_high_us")
    extra = ["time_us_p50: the slowest rank's median time per op"]
    if low is not None and high is not None:
        if symmetric_enough(p50, low, high):
            found["range"] = f"± {(high - low) / 2:.6g}"
            extra.append(f"95% CI of the p50: {low:.6g} .. {high:.6g} us")
        else:  # '± N' would read as reaching below the interval (below 0, even)
            extra.append(f"95% CI of the p50: {low:.6g} .. {high:.6g} us (lopsided: no ± range)")
    busbw = number(row, "busbw_GBps")
    if busbw is not None:
        extra.append(f"busbw: {busbw:.6g} GB/s")
    extra.append(f"samples: {row.values.get('samples', '')}, trials: {row.values.get('trials')}")
    found["extra"] = "\n".join(extra)
    return found
