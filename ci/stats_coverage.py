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

from distbench.stats.verdict import IMPROVED, REGRESSED

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


def covered_share(  # type: ignore[no-untyped-def]
    outcome, slowed: str | None, truth: float, selected: bool | None = None,
    truths: dict[str, float] | None = None,
) -> float:  # fmt: skip
    """The share of the checked intervals that hold the truth: the slowed primitive's hypotheses
    (every one without a slowed primitive); with `selected` True only those printed beside a
    verdict (regressed or improved: their level is Judged.level, Benjamini-Yekutieli's), False
    only the others (printed at 95 %).
    `truths`: each primitive's true change where it is not `truth` (a verdict on an unslowed
    primitive is judged against 0 while the slowed one's is judged against its slowdown)."""
    checked = []
    for judged in whole_run_excluded(outcome):
        if judged.shift is None:
            continue
        if slowed is not None and judged.hypothesis.primitive != slowed:
            continue
        if selected is not None and selected != (judged.state in (REGRESSED, IMPROVED)):
            continue
        low, high = judged.interval()
        true = (truths or {}).get(judged.hypothesis.primitive, 0.0 if truths else truth)
        checked.append(low <= true <= high)
    return float(np.mean(checked)) if checked else math.nan


@dataclass
class FalseCoverage:
    """The intervals printed beside a verdict (regressed, improved), each at its own level
    (Judged.level: 1 - R alpha / m): per night, the share of them that missed the truth (0 on a
    night without a verdict), whose mean is the false coverage rate Benjamini and Yekutieli
    bound by alpha; and the levels printed."""

    name: str
    missed: list[float]
    levels: list[float]
    nights: int = 0
    """Nights with a verdict."""

    def row(self) -> dict[str, object]:
        values = np.array(self.missed)
        mean = float(values.mean())
        error = float(values.std(ddof=1) / math.sqrt(len(values)))
        level = f"{np.median(self.levels):.1%}" if self.levels else "-"
        return {
            "name": self.name, "value": f"{mean:.2%}", "interval": f"+-{error:.2%} (MC)",
            "target": "<= 5 % (FCR)", "ok": "yes" if mean - 2 * error <= 0.05 else "NO",
            "note": f"{len(values)} nights, {self.nights} with a verdict; its intervals' median "
            f"level {level}",
        }  # fmt: skip


def coverage(
    judge: Judge, pool: list[list[int]], window: int, reps: int, seed: int, noise: str,
    ab: bool,
) -> tuple[Coverage, Coverage, FalseCoverage]:  # fmt: skip
    """Every checked interval's coverage (95 %, or a verdict's level), that of those printed at
    95 % (no verdict), and the false coverage rate of those printed beside a verdict
    (FalseCoverage)."""
    rng = np.random.default_rng(seed)
    primitives = sorted(set(judge.primitives.tolist()))
    shares: list[float] = []
    plain: list[float] = []  # the intervals printed at 95 %: no verdict
    what = "A/B, the slowed primitive's" if ab else "A/A, every"
    chosen = FalseCoverage(f"compare: false coverage rate beside verdicts, {what}, {noise}", [], [])
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
        share = covered_share(outcome, slowed, SLOWDOWN - 1 if ab else 0.0, selected=False)
        if math.isfinite(share):
            plain.append(share)
        share = covered_share(outcome, None, SLOWDOWN - 1 if ab else 0.0, selected=True, truths=(
            {slowed: SLOWDOWN - 1} if ab else None))  # fmt: skip
        chosen.missed.append(1 - share if math.isfinite(share) else 0.0)
        if math.isfinite(share):
            chosen.nights += 1
            chosen.levels += [j.level for j in whole_run_excluded(outcome)
                              if j.state in (REGRESSED, IMPROVED)]  # fmt: skip
    return (
        Coverage(f"compare interval as printed: {what} hypotheses, {noise}", shares),
        Coverage(f"compare 95 % interval: {what} hypotheses without a verdict, {noise}", plain),
        chosen,
    )
