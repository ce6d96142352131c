"""A confidence sequence for a row's p50 over its trials: an interval that holds the p50 at 95 %
at whatever trial a measurement stops, however the stop was chosen. `--precision` in latency mode
adds trials until it is within +-P and prints it (stats/stopping.py). Pure Python, as
intervals.py: the rank side imports it without numpy or scipy.

Why: a measurement that stops when its interval looks narrow picks trials that happened to
agree, and the fixed-trial interval of the trials it stopped on is then too narrow. Under the
rule before this one (the 99 % interval within +-P at 3 looks in a row), the printed 95 %
interval of a converged latency row held the truth in 69-81 % of rows with exchangeable trials
(ci/bench_stats_intervals.py, the recorded latency launches) and 80-85 % on the sequential
latency launches of 2026-12-05. A confidence sequence holds at every trial at once (P(some
trial's interval misses) <= 5 %), so it holds at any stop, looked at after every trial.

How: the p50 is the value q with half of the row's ops below it. Trial i's share of ops below q,
x_i(q) in [0, 1], has mean 1/2 at the true p50 when trials are alike (the trial is the unit, as in
intervals.py: ops of one trial share its moment). Whether the shares' mean can be 1/2 is a bet
against it (Waudby-Smith and Ramdas 2024, "Estimating means of bounded random variables by
betting", JRSS B 86(1)): a gambler who starts with 1 and stakes lambda_i (x_i - 1/2) on each trial,
lambda_i chosen from the trials before it only, holds a nonnegative martingale when the mean is
1/2; by Ville's inequality it reaches 1/alpha with probability at most alpha, ever. Their hedged
capital (half the stake on a mean above 1/2, half below) with predictable plug-in bets,
lambda_t = min(sqrt(2 log(2/alpha) / (var_{t-1} t log(1 + t))), c / (1/2)), c = 3/4, var_t = (1/4 +
sum (x_i - mean_i)^2) / (t + 1) and mean_t = (1/2 + sum x_i) / (t + 1). The sequence at trial t is
every q whose capital is below 1/alpha: q runs over the gaps between the pooled ops (a share is
constant inside a gap), and the ends are found by bisection outwards from the p50's gap, taking
the capital to grow as q moves away from the p50 (the ops below q only grow with q; the bets,
fitted on the shares, can break this at a gap's scale, and the coverage is measured, not assumed:
docs/measurement.md).

With one sample a trial (throughput mode) a share is 0 or 1, a bit a trial, and the sequence
narrows slowly: at +-10 % it converged 5-13 % of simulated rows where the fixed-trial rule
converges 13-26 %, and that rule's printed intervals held 91.8-97.2 % there. So one sample a
trial keeps that rule (stats/stopping.py).

What it cannot see, as no interval over one launch's trials can: drift slower than the trials.
A launch spent in one quiet stretch looks precise.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from distbench.stats.intervals import CONFIDENCE, percentile

BET_CAP = 0.75
"""c: a bet stakes at most c / (1/2) of the capital on a trial's share (Waudby-Smith and Ramdas'
3/4): never all of it, so one trial cannot ruin the gambler."""
PRIOR_MEAN, PRIOR_VARIANCE = 0.5, 0.25
"""The plug-in's starting mean and variance of a share (theirs: the middle and the largest
variance of a value in [0, 1])."""


def capital(shares: Sequence[float], confidence: float = CONFIDENCE) -> float:
    """The hedged capital after betting against 'the shares' mean is 1/2' on each in turn
    (module docstring): >= 1 / (1 - confidence) rejects it."""
    alpha = 1 - confidence
    log_term = 2 * math.log(2 / alpha)
    above = below = 1.0
    total, squares = PRIOR_MEAN, PRIOR_VARIANCE
    for t, share in enumerate(shares, start=1):
        variance = squares / t  # var_{t-1}: the prior and the t - 1 shares before this one
        bet = min(math.sqrt(log_term / (variance * t * math.log(1 + t))), BET_CAP / 0.5)
        above *= 1 + bet * (share - 0.5)
        below *= 1 - bet * (share - 0.5)
        total += share
        squares += (share - total / (t + 1)) ** 2
    return 0.5 * above + 0.5 * below


def sequence_interval(
    trials: Sequence[Sequence[float]], confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """The confidence sequence of the p50 of every sample at `confidence`, the trials as units in
    their order (module docstring); (nan, nan) while it is unbounded on either side (too few
    trials to rule out any value beyond the data) or when the p50's own gap is ruled out (the
    trials' order itself tells against one level: they drifted)."""
    runs = [sorted(trial) for trial in trials if trial]
    if len(runs) < 2:
        return math.nan, math.nan
    pooled = sorted(v for run in runs for v in run)
    values = sorted(set(pooled))
    threshold = 1 / (1 - confidence)

    def ruled_out(gap: int) -> bool:
        """Whether q strictly between values[gap] and values[gap + 1] (gap -1: below every
        value; len(values) - 1: above) is outside the sequence."""
        below = values[gap] if gap >= 0 else -math.inf
        shares = [bisect_right(run, below) / len(run) for run in runs]
        return capital(shares, confidence) >= threshold

    last = len(values) - 1
    middle = max(bisect_left(values, percentile(pooled, 50)) - 1, 0)
    if middle >= last:  # every sample equal
        middle = last - 1 if last > 0 else -1
    if ruled_out(middle) or not ruled_out(-1) or not ruled_out(last):
        return math.nan, math.nan
    out, inside = -1, middle  # the lowest gap kept lies in (out, inside]
    while inside - out > 1:
        probe = (out + inside) // 2
        out, inside = (probe, inside) if ruled_out(probe) else (out, probe)
    low = values[inside]
    inside, out = middle, last  # the highest gap kept lies in [inside, out)
    while out - inside > 1:
        probe = (inside + out) // 2
        inside, out = (inside, probe) if ruled_out(probe) else (probe, out)
    return low, values[inside + 1]


def earliest_trials(confidence: float = CONFIDENCE) -> int:
    """The fewest trials at which the sequence can be bounded at all: every trial's ops on one
    side of a value, the largest bet each time, until the capital reaches 1 / (1 - confidence)."""
    threshold = 1 / (1 - confidence)
    for count in range(2, 1000):
        if capital([0.0] * count, confidence) >= threshold:
            return count
    raise ValueError(f"no number of trials bounds a {confidence:.0%} sequence")
