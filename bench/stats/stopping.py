"""--precision's stopping rule: when a measurement that adds trials one at a time may stop as
`converged` (comm/precision.py runs it on rank 0; ci/bench_stats_intervals.py simulates this very
function). Pure Python: the rank side and the CLI (which refuses a --max-trials that could never
reach it) import it without numpy, scipy or torch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

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
"""The earliest trial count at which a measurement may stop as converged (14): a --max-trials
below it could never converge, and the CLI refuses it with --precision."""


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
