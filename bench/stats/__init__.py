"""distbench's statistical core: one package that every verdict, interval and estimate calls, so
that compare, the nightly gate, report, history, --precision and the fit cannot disagree.

A leaf: it imports numpy and scipy, never torch, pandas or another distbench package, so the rank
side (--precision) and the reports both use it. Its modules follow the data:

- samples:    one measurement's samples -> the row's figures (p50, mean, ..., the p50's interval)
- intervals:  the p50's interval with the trial as the unit, and t quantiles (pure Python: the
              rank side's --precision imports it without numpy or scipy)
- sequence:   the p50's confidence sequence over trials, valid at whatever trial --precision
              stops (pure Python, as intervals); stopping: --precision's rule
- fit:        a line's p50s over size -> latency alpha and bandwidth beta, with intervals
- decompose:  a matrix of pair times -> each unit's own value (distbench pairs)
- components: one row's launches -> its launch-level variance, within- and between-launch parts,
              and the empirical-Bayes prior borrowed from similar rows
- shift:      two sides' launches -> the shift between them, its interval, p-value and the
              smallest change the comparison could see (detectable_change)
- family:     the hypotheses of one comparison (every row; per primitive, size bands, one world
              size, one dtype) and Benjamini-Hochberg over them
- verdict:    the four states every output uses (regressed, improved, no change seen, cannot tell)
- box:        a night whose primitives moved at once, each its own way: cannot tell, the box
              changed under the window

Why the launch is the unit between runs: the trials of one launch share its process placement
and the box's load of the moment, so they scatter less than launches do; a test that counts
trials as independent across launches is anti-conservative (docs/gate.md measures by how much).
Inside one launch, the trial is the unit (intervals.trial_interval).
"""

from distbench.stats.samples import (
    CONFIDENCE,
    Stats,
    algbw_gbps,
    median_ci_ranks,
    percentile,
    row_figures,
)

__all__ = ["CONFIDENCE", "Stats", "algbw_gbps", "median_ci_ranks", "percentile", "row_figures"]
