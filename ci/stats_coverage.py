"""Coverage of compare's (and so report's) 95 % intervals, by resampling recorded launches with
named added noise; never by drawing from the model under test.

One replication: a baseline window of W nights and tonight, drawn without replacement from the
held-out nights; added noise of one named kind; on A/B replications one primitive 25 % slower.
Each hypothesis's interval (reports/compare: the time ratio's 95 % interval, minus 1) is checked
against the truth: 0 on A/A replications; +25 % for the slowed primitive's hypotheses on A/B
(its rows' levels beyond the rest of the run are not moved by its own slowdown: the common level
leaves the primitive out). The other primitives' hypotheses on A/B replications, and the whole
run, have no clean truth (the slowed rows move the median they are measured beyond) and are left
out. The Monte Carlo error is the standard error over replications of each replication's share
of covered intervals.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from stats_gate import SLOWDOWN, Judge, whole_run_excluded

Noise = Callable[[np.random.Generator, int, int, int], np.ndarray]
"""(rng, base launches, current launches, rows) -> log noise, (base + current) x rows."""


def no_noise(rng: np.random.Generator, nb: int, nc: int, rows: int) -> np.ndarray:
    return np.zeros((nb + nc, rows))


def launch_shift(rng: np.random.Generator, nb: int, nc: int, rows: int) -> np.ndarray:
    """Every launch moved by one lognormal factor of sd 5 %, all its rows alike."""
    return np.repeat(rng.normal(0.0, 0.05, size=(nb + nc, 1)), rows, axis=1)


def row_drift(rng: np.random.Generator, nb: int, nc: int, rows: int) -> np.ndarray:
    """Each row drifts from night to night (two launches a night) as an AR(1) of phi 0.5 with a
    stationary sd of 5 %: nights are no longer exchangeable."""
    nights = (nb + nc + 1) // 2
    phi, sd = 0.5, 0.05
    level = rng.normal(0.0, sd, size=rows)
    path = []
    for _ in range(nights):
        path.append(level)
        level = phi * level + rng.normal(0.0, sd * math.sqrt(1 - phi**2), size=rows)
    per_night = np.array(path)
    return np.repeat(per_night, 2, axis=0)[: nb + nc]


def heavy_tails(rng: np.random.Generator, nb: int, nc: int, rows: int) -> np.ndarray:
    """Each launch value of each row moved by Student t with 3 df, scaled to 3 %."""
    return 0.03 * rng.standard_t(3, size=(nb + nc, rows))


NOISES: dict[str, Noise] = {
    "resampled launches": no_noise,
    "+ 5 % launch shift": launch_shift,
    "+ AR(1) row drift (phi 0.5, 5 %)": row_drift,
    "+ heavy tails (t3, 3 %)": heavy_tails,
}


@dataclass
class Coverage:
    name: str
    covered: list[float]
    """Per replication: the share of its checked intervals that held the truth."""

    def row(self) -> dict[str, object]:
        values = np.array(self.covered)
        mean = float(values.mean())
        error = float(values.std(ddof=1) / math.sqrt(len(values)))
        ok = abs(mean - 0.95) <= 0.03
        return {
            "name": self.name, "value": f"{mean:.1%}", "interval": f"+-{error:.1%} (MC)",
            "target": "95 % +- 3", "ok": "yes" if ok else "NO",
            "note": f"{len(values)} replications",
        }  # fmt: skip


def covered_share(outcome, slowed: str | None, truth: float) -> float:  # type: ignore[no-untyped-def]
    checked = []
    for judged in whole_run_excluded(outcome):
        if judged.shift is None:
            continue
        if slowed is not None and judged.hypothesis.primitive != slowed:
            continue
        low, high = judged.interval()
        checked.append(low <= truth <= high)
    return float(np.mean(checked)) if checked else math.nan


def coverage(
    judge: Judge, pool: list[list[int]], window: int, reps: int, seed: int, noise: str,
    ab: bool,
) -> Coverage:  # fmt: skip
    rng = np.random.default_rng(seed)
    primitives = sorted(set(judge.primitives.tolist()))
    shares = []
    for _ in range(reps):
        picks = rng.choice(len(pool), size=window + 1, replace=False)
        base = [pool[i] for i in picks[:window]]
        current = pool[picks[window]]
        nb, rows = sum(len(n) for n in base), len(judge.keys)
        added = NOISES[noise](rng, nb, len(current), rows)
        base_y = judge.values.y[[i for n in base for i in n]] + added[:nb]
        shift = added[nb:]
        slowed = None
        if ab:
            slowed = primitives[int(rng.integers(len(primitives)))]
            shift = shift + math.log(SLOWDOWN) * (judge.primitives == slowed)
        outcome = judge.night(base, current, shift, base_y)
        share = covered_share(outcome, slowed, SLOWDOWN - 1 if ab else 0.0)
        if math.isfinite(share):
            shares.append(share)
    what = "A/B, the slowed primitive's" if ab else "A/A, every"
    return Coverage(f"compare 95 % interval: {what} hypotheses, {noise}", shares)
