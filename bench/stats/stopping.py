"""--precision's stopping rule: when a measurement that adds trials one at a time may stop as
`converged` (comm/precision.py runs it on rank 0; ci/bench_stats_intervals.py simulates this very
function). Pure Python: the rank side and the CLI (which refuses a --max-trials that could never
reach it) import it without numpy, scipy or torch.

Two rules, by what a trial holds (`converged`):

- several samples a trial (latency mode): the p50's 95 % confidence sequence over trials
  (sequence.py) within +-P, looked at after every trial. It holds at every trial at once, so
  looking often costs nothing, and the row prints it: at the stop it held the truth in
  96.7-99.9 % of simulated rows (92.8 % where the box drifts hard between trials), where the rule
  below printed a 95 % interval that held it in 69-85 % of the rows it stopped
  (docs/measurement.md#coverage-of-the-printed-intervals).
- one sample a trial (throughput mode, single-op latency trials): the 99 % order-statistic
  interval within +-P at CONFIRM_LOOKS looks in a row (precision_met, below). A sequence of one
  bit a trial narrows too slowly to be worth it (sequence.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from distbench.stats.intervals import PRECISION_CONFIDENCE
from distbench.stats.samples import Stats
from distbench.stats.sequence import earliest_trials

MIN_TRIALS = 10
"""--precision's first look that may count is after this many trials (module docstring)."""
LOOK_EVERY = 2
"""Then a look every this many trials (10, 12, 14 ...): fewer looks, fewer chances to stop on a
lucky stretch."""
CONFIRM_LOOKS = 3
"""`converged` needs the interval within +-P at this many consecutive looks (so at the earliest
after FIRST_STOP trials), not one. Stopping at the first 99 % interval within +-10 %, 5.8-6.8 %
of the rows declared converged were further than 10 % from the truth (recorded latency trials with
independent noises, ci/bench_stats_intervals.py, 3,000 rows, seed 5); with this rule 0.8-1.9 %,
and about half as many rows converge. Chosen among minimums of 5-30 trials, 1-4 consecutive
looks, a look every 1, 2, 3 or 5 trials and a 1/n-shrunk bound (Chow-Robbins style), on
launches lat1 and lat2 only: the one with the most converged rows at most 1 % off there (a
minimum of 20 trials alone, at most 2.5 % off there, left 4-7 % on lat3 and lat4).
docs/measurement.md#coverage-of-the-printed-intervals has the figures."""


FIRST_STOP = MIN_TRIALS + LOOK_EVERY * (CONFIRM_LOOKS - 1)
"""The earliest trial count at which a measurement of one sample a trial may stop as converged
(14): a --max-trials below it could never converge, and the CLI refuses it with --precision."""
SEQUENCE_FIRST = earliest_trials()
"""The same for several samples a trial (7): the confidence sequence is unbounded before."""


def first_stop(clustered: bool) -> int:
    """The fewest trials after which a measurement can converge: SEQUENCE_FIRST where a trial
    holds several samples, FIRST_STOP where it holds one."""
    return SEQUENCE_FIRST if clustered else FIRST_STOP


def converged(stats: Stats, widths: list[float], precision: float) -> bool:
    """Whether --precision stops the measurement whose samples so far are `stats` (looked: True,
    `stats.trials` trials) as converged (module docstring). `widths` keeps the 99 % interval's
    half-widths after each trial for the one-sample rule (record_width); the sequence needs none."""
    if stats.clustered:
        return stats.ci_half_width() <= precision
    record_width(widths, stats.trials or stats.n, stats.ci_half_width(PRECISION_CONFIDENCE))
    return precision_met(widths, precision)


def precision_met(widths: Sequence[float], precision: float) -> bool:
    """Whether --precision stops a measurement as converged. `widths[i]`: the p50's
    PRECISION_CONFIDENCE interval's larger half-width, as a share of the p50, after trial i + 1
    (Stats.ci_half_width; inf where none was taken or there was no interval). True when
    len(widths) trials is a look (MIN_TRIALS, then every LOOK_EVERY) and the last CONFIRM_LOOKS
    looks were all within +-precision. ci/bench_stats_intervals.py simulates this very function."""
    run = len(widths)
    looks = range(run, MIN_TRIALS - 1, -LOOK_EVERY)[:CONFIRM_LOOKS]
    return (
        (run - MIN_TRIALS) % LOOK_EVERY == 0
        and len(looks) == CONFIRM_LOOKS
        and all(widths[look - 1] <= precision for look in looks)
    )


def record_width(widths: list[float], trials_run: int, width: float) -> None:
    """Keep `width`, the half-width after trial `trials_run`, in `widths` as precision_met reads
    them: the trials before it whose interval was not taken (the first batch's) count as inf."""
    widths += [math.inf] * (trials_run - 1 - len(widths))
    widths.append(width)
