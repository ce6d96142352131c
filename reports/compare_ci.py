"""compare's note on rows whose p50 confidence intervals (schema v3) straddle the threshold band's
edge: the samples cannot tell whether such a row is past its threshold."""

from __future__ import annotations

from distbench.reports.compare import Comparison
from distbench.reports.runs import Run

CI_METRICS = {"time_us_p50": False, "algbw_GBps": True, "busbw_GBps": True}
"""Metrics the p50's confidence interval speaks for -> higher is better (bandwidths: size / p50)."""


def ci_band_notes(comparison: Comparison, baseline: Run, current: Run) -> list[str]:
    """Rows whose p50 confidence intervals (ci_low_us..ci_high_us, schema v3) overlap the
    threshold band's edge: the ratio of the two p50s could lie on either side of it (from
    ci_low/base ci_high to ci_high/base ci_low), so the samples cannot say whether the row is
    past its threshold; the verdict stands on the rank test and threshold. One line."""
    hits = []
    for number, row in enumerate(comparison.rows, 1):
        key = tuple(row.key.items())
        base, cur = baseline.rows.get(key), current.rows.get(key)
        if row.column not in CI_METRICS or not row.threshold.endswith("%") or not base or not cur:
            continue
        bounds = [r.metric(c) for r in (base, cur) for c in ("ci_low_us", "ci_high_us")]
        if None in bounds or min(b or 0 for b in bounds) <= 0:
            continue  # no interval (fewer than 6 samples, or a run older than v3)
        b_low, b_high, c_low, c_high = (b or 0.0 for b in bounds)
        low, high = c_low / b_high, c_high / b_low  # the p50 time ratio's plausible range
        share = float(row.threshold[:-1]) / 100
        bandwidth = CI_METRICS[row.column]
        edges = (
            (1 / (1 - share), 1 / (1 + share))
            if bandwidth and share < 1
            else (1 + share, 1 - share)
        )
        if any(low < edge < high for edge in edges):
            hits.append(f"{number} ({low:.3f}-{high:.3f})")
    if not hits:
        return []
    more = f" and {len(hits) - 12} more" if len(hits) > 12 else ""
    return [
        f"{len(hits)} rows' 95 % CIs of the p50 overlap the threshold band: their p50 time "
        f"ratio could lie on either side of its edge, so the samples cannot tell whether they "
        f"are past the threshold (more trials, or --precision, narrow the CIs): rows "
        f"{', '.join(hits[:12])}{more} (time ratio range)"
    ]
