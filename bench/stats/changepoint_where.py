"""Where a change point's step may have started: the nights a 95 % range of a step like it holds,
for a bisect (bench/stats/changepoint_parts.py located gives each change point its range).

    first, last = night_range(logs, white, split)   # positions in logs; first <= split <= last

Why: a change point is placed at the night whose step statistic is largest, and in drift that
night is uncertain. A 20 % step at night 40 of 60 with AR(1) drift (phi 0.5) is placed within 2
nights of it in 83 % of the series where it is found (ci/bench_stats_history.py): someone who
bisects the commits of the one night it names misses the change one time in six.

How: a parametric bootstrap of the placement (Hinkley 1970; Antoch and Huskova 1999 for
bootstrapped change-point locations). The part's noise is fitted around its split as history
fits it (changepoint_model.refined: AR(1) drift and the known launch noise); DRAWS series of that
noise with the step at the split are simulated, each placed as history places a change
(estimate_noise, then the largest |t| of the GLS profile); the range runs from the 2.5th to the
97.5th percentile of the nights they were placed at, each rounded outwards.

The step simulated is the measured one shrunk by SHRINK of its standard error: a change point is
found where its step looked large, so the measured step overstates it (the winner's curse), and a
larger step is placed more sharply. With the measured step the range held the true night in
90-93 % of found 20 % steps at phi 0.5; shrunk by half a standard error, 94-97 % (tuned on two
seeds of a scratch run over six kinds of series: iid, phi 0.5 and 0.8, a late step, a 10 % step,
a 50 % step). ci/bench_stats_history.py measures it on draws not used to choose it
(docs/history.md).

What it does not cover: a step that did not happen (a false change point has no true night), and
a change spread over several nights (a gradual slowdown has no one night; the range then spans
where its steepest part may lie).
"""

from __future__ import annotations

import math

import numpy as np

from distbench.stats.changepoint_model import estimate_noise, profile, raw_series, refined

LEVEL = 0.95
DRAWS = 400
"""Series simulated a range: its ends are the 10th draw from each side (the 2.5th and 97.5th
percentiles), which move by about a night between seeds where the range is wide."""
SHRINK = 0.5
"""Standard errors the measured step is shrunk by before it is simulated (module docstring)."""
FLOOR = 0.3
"""The simulated step is at least this share of the measured one (a step whose t is below
SHRINK / (1 - FLOOR) is one no change point is found for)."""


def night_range(
    logs: np.ndarray, white: float, split: int, level: float = LEVEL, draws: int = DRAWS
) -> tuple[int, int]:
    """(first, last): the positions in `logs` (one part of a series, log values, larger is
    slower) that its step's first night may be at, at `level`, where the change point placed it
    at `split` (the first night of the new level); `white`: the launch-noise variance of a night
    value (0 with one launch a night). Deterministic: the draws are seeded by the part's length
    and split."""
    y = np.asarray(logs, float)[None, :]
    n = y.shape[1]
    if not 1 <= split < n:
        raise ValueError(f"split {split} is outside a part of {n} nights")
    noise = refined(y, np.array([split]), np.array([white]))
    t, _effect = profile(y, noise)
    step = float(y[0, split:].mean() - y[0, :split].mean())
    t_split = abs(float(t[0, split - 1]))
    shrunk = step * max(1.0 - SHRINK / t_split, FLOOR) if t_split > 0 else step * FLOOR
    total = float((noise.sigma[0] / noise.gain[0]) ** 2)
    rng = np.random.default_rng([n, split])
    phi, share = np.full(draws, noise.phi[0]), np.full(draws, noise.white[0])
    simulated = raw_series(rng, phi, share, n) * math.sqrt(total)
    simulated += shrunk * (np.arange(n) >= split)
    placed_t, _ = profile(simulated, estimate_noise(simulated, np.full(draws, white)))
    placed = np.abs(placed_t).argmax(axis=1) + 1
    tail = (1 - level) / 2
    first = int(np.quantile(placed, tail, method="lower"))
    last = int(np.quantile(placed, 1 - tail, method="higher"))
    return min(first, split), max(last, split)
