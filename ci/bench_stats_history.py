"""How often `distbench history` finds a change point that is not there, and how often it finds a
20 % step that is: simulated series of nights, judged by the statistical core's change-point
method (distbench.stats.changepoint) exactly as history judges them.

    python ci/bench_stats_history.py             # >= 1,000 replications a row (< 1 min here)
    python ci/bench_stats_history.py --quick     # 300 a row, for the slow-marked test (< 20 s)

The noise level: a launch's fastest trial moves with a log sd of about 0.10 between launches of
this box (the median over the rows of tests/data/gate-launches-interleaved.json), and a night
averages two launches (ci/nightly.sh --launches 2), so a night value's sd is 0.10 / sqrt 2 =
0.071, which the rows below give to AR(1) drift of the night (phi = 0, 0.5, 0.8). Each series
is a history of its own (one family) unless the row says "history of 108": then the series are
the shipped matrix's 108 rows, and each primitive's rows are a group of the history
(distbench.stats.changepoint_group) as `distbench history` makes them.

A change point is "false" in a series without a step; a step is "found" when a regressed change
point lies within 5 nights of it, "placed" within 2. Monte Carlo errors are binomial for shares
and the standard error of the mean count for false change points per 100 series.

`run(quick, seed)` returns the table's rows (name, value, mc_error, target, ok); ci/bench_stats.py
imports it. ok is None for a row that has no target.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
LAUNCHES = ROOT / "tests" / "data" / "gate-launches-interleaved.json"
NIGHTS = 60
NIGHT_SD = 0.10 / math.sqrt(2)
"""A night value's sd: two launches of this box's launch spread (module docstring)."""
STEP = math.log(1.2)
NEAR = 5
"""Nights from the true step within which a regressed change point counts as finding it (a
week of commits to bisect); PLACED: within which it counts as placed."""
PLACED = 2
CASES = 108
"""Series in one history in the "history of 108" rows: the shipped nightly matrix's rows."""


def drift(rng: np.random.Generator, count: int, n: int, phi: float) -> np.ndarray:
    """AR(1) series (count, n) of marginal sd 1, started in their stationary distribution."""
    e = rng.standard_normal((count, n)) * math.sqrt(1 - phi * phi)
    x = np.empty((count, n))
    x[:, 0] = rng.standard_normal(count)
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x


def judge(
    logs: np.ndarray, white: np.ndarray | None = None, cases: int = 1, pool: bool = True,
    grouped: bool = True,
) -> list[list[tuple[int, float]]]:  # fmt: skip
    """Each series' change points (position, log step), as history judges them: every `cases`
    consecutive series form one history (one Benjamini-Hochberg family, whose series' phi is
    pooled when they agree on it, unless `pool` is False: distbench.stats.changepoint_pool).
    A history of CASES series is the matrix's rows, each primitive's rows a group
    (distbench.stats.changepoint_group), unless `grouped` is False."""
    from distbench.stats.changepoint import detect_changes

    white = np.zeros(len(logs)) if white is None else white
    families = [i // cases for i in range(len(logs))]
    names = sorted(set(PRIMITIVES))
    groups = [
        (i // cases) * len(names) + names.index(PRIMITIVES[i % cases])
        if cases == CASES and grouped else -1
        for i in range(len(logs))
    ]  # fmt: skip
    judged = detect_changes(
        list(logs), white.tolist(), 0.05, 0.05, families=families, pool_phi=pool, groups=groups
    )
    return [[(f.index, f.effect) for f in j.found] for j in judged]


def false_per_100(found: list[list[tuple[int, float]]]) -> tuple[float, float]:
    counts = np.array([len(f) for f in found], float)
    return 100 * counts.mean(), 100 * counts.std(ddof=1) / math.sqrt(len(counts))


def share(hits: list[bool]) -> tuple[float, float]:
    p = float(np.mean(hits))
    return p, math.sqrt(max(p * (1 - p), 1e-12) / len(hits))


def stepped(found: list[list[tuple[int, float]]], at: int, near: int = NEAR) -> list[bool]:
    return [any(abs(i - at) <= near and e > 0 for i, e in f) for f in found]


def launch_series(
    rng: np.random.Generator, count: int, phi: float, launch_share: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nights of two launches: AR(1) drift of the night plus each launch's own noise, the night
    value's variance NIGHT_SD^2 split launch_share : the rest. (logs, launch spread, launches)."""
    night = drift(rng, count, NIGHTS, phi) * NIGHT_SD * math.sqrt(1 - launch_share)
    own = NIGHT_SD * math.sqrt(launch_share * 2)  # a launch's sd; a mean of two halves it
    launches = night[:, :, None] + own * rng.standard_normal((count, NIGHTS, 2))
    return launches.mean(axis=2), launches.var(axis=2, ddof=1), np.full((count, NIGHTS), 2.0)


def white_of(spread: np.ndarray, launches: np.ndarray) -> np.ndarray:
    from distbench.reports.history.detect import launch_noise

    return np.array([launch_noise(s, n) for s, n in zip(spread, launches, strict=True)])


def real_launches(rng: np.random.Generator, count: int) -> np.ndarray:
    """Series whose nights are two launches drawn (with replacement) from the 12 recorded
    launches of one row of this box: real launch-to-launch noise, outliers included."""
    data = json.loads(LAUNCHES.read_text())
    names = sorted(data["launches"])
    rows = [
        np.log([min(data["launches"][n][i]) for n in names])
        for i in range(len(data["cases"]))
        if all(data["launches"][n][i] for n in names)
    ]
    chosen = [rows[int(k)] for k in rng.integers(0, len(rows), count)]
    picks = rng.integers(0, len(names), (count, NIGHTS, 2))
    return np.stack([r[p].mean(axis=1) for r, p in zip(chosen, picks, strict=True)])


def run(quick: bool, seed: int) -> list[dict]:
    """The table (module docstring): one dict per row."""
    reps = 300 if quick else 1_000
    rng = np.random.default_rng(seed)
    rows: list[dict] = []

    def add(name: str, measured: tuple[float, float], target: str, ok: bool | None) -> None:
        rows.append(entry(name, measured, target, ok))

    for phi in (0.0, 0.5, 0.8):
        noise = drift(rng, reps, NIGHTS, phi) * NIGHT_SD
        value = false_per_100(judge(noise))
        target = "<= 5" if phi == 0.5 else ""
        label = "iid" if phi == 0 else f"AR(1) phi {phi}"
        add(f"false change points per 100 null series, {label}", value, target,
            value[0] <= 5 if target else None)  # fmt: skip
        for at in (30, 40, 50, 57) if phi == 0.5 else (40,):
            judged = judge(noise + STEP * (np.arange(NIGHTS) >= at))
            found = share(stepped(judged, at))
            target = ">= 0.90" if phi == 0.5 and at == 40 else ""
            add(f"20 % steps found, {label}, step at night {at} of {NIGHTS}", found, target,
                found[0] >= 0.90 if target else None)  # fmt: skip
            if at == 40:
                add(f"  ... placed within {PLACED} nights of it", share(stepped(judged, at, 2)),
                    "", None)  # fmt: skip
            if at == 40 and phi == 0.5:  # where the misses are (docs/history.md)
                add("  ... with a change point anywhere (its series' test fired)",
                    share([bool(f) for f in judged]), "", None)  # fmt: skip
                strong = fitted_phi(noise + STEP * (np.arange(NIGHTS) >= at)) >= 0.6
                add("  ... share of them whose fitted phi is >= 0.6", share(list(strong)), "", None)
                add("  ... found, of those whose fitted phi is >= 0.6",
                    share([h for h, s in zip(stepped(judged, at), strong, strict=True) if s]), "",
                    None)  # fmt: skip
    add("20 % steps found, AR(1) phi 0.5, step at 40, the same test with phi and sd known",
        known_phi(np.random.default_rng([seed, 5]), 4 * reps), "", None)  # fmt: skip
    one = drift(rng, reps, NIGHTS, 0.5) * 0.10 + STEP * (np.arange(NIGHTS) >= 40)
    add("20 % steps found, AR(1) phi 0.5, one launch a night (sd 0.10), step at 40",
        share(stepped(judge(one), 40)), "", None)  # fmt: skip
    for phi in (0.5, 0.8):
        logs, spread, launches = launch_series(rng, reps, phi, 0.5)
        add(f"false per 100, drift phi {phi} + as much launch noise, launch spread used",
            false_per_100(judge(logs, white_of(spread, launches))), "", None)  # fmt: skip
        add(f"false per 100, drift phi {phi} + as much launch noise, launch spread ignored",
            false_per_100(judge(logs)), "", None)  # fmt: skip
    heavy = rng.standard_t(3, (reps, NIGHTS)) * NIGHT_SD / math.sqrt(3)
    add("false per 100, iid t(3) nights", false_per_100(judge(heavy)), "", None)
    add("false per 100, real launches of this box resampled, 2 a night",
        false_per_100(judge(real_launches(rng, reps))), "", None)  # fmt: skip
    add("share of recorded launches beyond 4 robust sd of their row (no simulation)",
        (outlier_share(), 0.0), "", None)  # fmt: skip
    add("sd of the fitted phi, AR(1) phi 0.5, 60 nights", phi_spread(rng, reps), "", None)
    histories = max(reps // 3, 50)
    many = drift(rng, histories * CASES, NIGHTS, 0.5) * NIGHT_SD
    rows.append(null_entry(f"histories of {CASES} null series (phi 0.5) with any false change "
                           "point", any_false(judge(many, cases=CASES))))  # fmt: skip
    rows += pooled_rows(rng, max(reps // 100, 3))
    rows += box_rows(rng, max(reps // 10, 30))
    rows += synthetic_rows(6 if quick else 16, seed)
    rows += recorded_rows()
    rows += claim_rows(np.random.default_rng([seed, 25]), max(reps // 25, 12))
    from bench_history_where import run as where_run  # where a change point's step started

    rows += where_run(quick, seed)
    return rows


def known_phi(
    rng: np.random.Generator, reps: int, phi: float = 0.5, at: int = 40
) -> tuple[float, float]:
    """What estimating phi costs a series alone: the GLS statistic of its log values with the
    drift's phi and variance known (changepoint_model.profile), its null's 95th percentile
    simulated at that phi; a step counts as found as above (within NEAR nights, slower)."""
    from distbench.stats.changepoint_model import model, profile

    noise = model(np.full(reps, phi), np.full(reps, NIGHT_SD**2), np.zeros(reps))
    null, _ = profile(drift(rng, reps, NIGHTS, phi) * NIGHT_SD, noise)
    critical = np.quantile(np.abs(null).max(axis=1), 0.95)
    y = drift(rng, reps, NIGHTS, phi) * NIGHT_SD + STEP * (np.arange(NIGHTS) >= at)
    t, effect = profile(y, noise)
    night = np.abs(t).argmax(axis=1)  # profile's column k - 1: a step whose first night is k
    hits = (np.abs(t).max(axis=1) > critical) & (np.abs(night + 1 - at) <= NEAR)
    return share(list(hits & (effect[np.arange(reps), night] > 0)))


HOW = {True: "phi pooled", False: "each series' own phi (as before)"}


def entry(
    name: str, measured: tuple[float, float], target: str = "", ok: bool | None = None
) -> dict:
    """A row of the table: measured is (value, Monte Carlo error)."""
    value, error = measured
    return dict(name=name, value=value, mc_error=error, target=target, ok=ok)


def null_entry(name: str, measured: tuple[float, float], targeted: bool = True) -> dict:
    """A history's chance of any false change point, judged (when `targeted`) at most 0.05
    within two Monte Carlo errors: Benjamini-Hochberg at q = 0.05 over a history of null series
    holds it at 0.05 when the p-values are exact, so a true 5 % reads above 0.05 half the time."""
    if not targeted:
        return entry(name, measured)
    return entry(name, measured, "<= 0.05", bool(measured[0] <= 0.05 + 2 * measured[1]))


def any_false(found: list[list[tuple[int, float]]]) -> tuple[float, float]:
    """The share of histories of CASES series with any change point."""
    return share([any(f) for f in chunks(found, CASES)])


def by_history(hits: list[bool], size: int) -> tuple[float, float]:
    """(share, Monte Carlo error) of hits that come `size` to a history, in history order: the
    error from the spread of the histories' own shares. The series of one history share its
    pooled phi and its null, so their hits are not independent, and a binomial error counts
    them as if they were (for a tenth of a history stepped it is about the same: 1.8 against
    1.9 points at seed 1; that row's seeds spread 83-89 %, docs/history.md)."""
    per = np.asarray(hits, float).reshape(-1, size).mean(axis=1)
    error = float(per.std(ddof=1)) / math.sqrt(len(per)) if len(per) > 1 else math.nan
    return float(per.mean()), error


def pooled_rows(rng: np.random.Generator, histories: int) -> list[dict]:
    """Histories of CASES series, whose phi history pools when its series agree on it
    (distbench.stats.changepoint_pool): 20 % steps at night 40 in every series, or in one
    series of ten, with the pooling and without; and null histories whose series' phi differ
    or who share one drift, the cases the pooling must not turn into false change points."""
    rows: list[dict] = []
    at = 40
    step = STEP * (np.arange(NIGHTS) >= at)
    every = f"step at night {at}, histories of {CASES} series, every series stepped"
    noise = drift(rng, 3 * histories * CASES, NIGHTS, 0.5) * NIGHT_SD
    some = np.arange(len(noise)) % CASES < CASES // 10
    for pool in (True, False):
        found = by_history(
            stepped(judge(noise[: histories * CASES] + step, cases=CASES, pool=pool), at), CASES
        )
        target, ok = (">= 0.90", found[0] >= 0.90) if pool else ("", None)
        rows.append(entry(f"20 % steps found, AR(1) phi 0.5, {every}, {HOW[pool]}", found, target,
                          ok))  # fmt: skip
        judged = judge(noise + np.where(some[:, None], step, 0.0), cases=CASES, pool=pool)
        found = by_history([h for h, s in zip(stepped(judged, at), some, strict=True) if s],
                           CASES // 10)  # fmt: skip
        tenth = f"histories of {CASES} series, {CASES // 10} of them stepped"
        rows.append(entry(f"20 % steps found, AR(1) phi 0.5, step at night {at}, {tenth}, "
                          f"{HOW[pool]}", found))  # fmt: skip
        if pool:  # what the groups (each primitive's rows as one series more) found
            alone = judge(noise + np.where(some[:, None], step, 0.0), cases=CASES, grouped=False)
            rows.append(entry("  ... the same, without the groups (each row's own test alone)",
                              by_history([h for h, s in zip(stepped(alone, at), some, strict=True)
                                          if s], CASES // 10)))  # fmt: skip
        if pool:  # the same histories as `distbench history` judges them by default
            hits = []
            for start in range(0, len(noise), CASES):
                y = noise[start : start + CASES] + np.where(some[:CASES, None], step, 0.0)
                found_rows, _whole = judge_recorded(y, np.zeros(CASES), PRIMITIVES, True)
                hits += [h for h, s in zip(stepped(found_rows, at), some[:CASES], strict=True)
                         if s]  # fmt: skip
            rows.append(entry(f"  ... the same, each series as one of the matrix's rows (the "
                              f"{CASES // 10} stepped: send_recv's), {RELATIVE[True]}",
                              by_history(hits, CASES // 10)))  # fmt: skip
    strong = drift(rng, 10 * histories * CASES, NIGHTS, 0.8) * NIGHT_SD
    for pool in (True, False):
        judged = judge(strong[: histories * CASES] + step, cases=CASES, pool=pool)
        rows.append(entry(f"20 % steps found, AR(1) phi 0.8, {every}, {HOW[pool]}",
                          by_history(stepped(judged, at), CASES)))  # fmt: skip
        rows.append(null_entry(f"histories of {CASES} null series (phi 0.8) with any false "
                               f"change point, {HOW[pool]}",
                               any_false(judge(strong, cases=CASES, pool=pool)), pool))  # fmt: skip
    logs, spread, launches = launch_series(rng, 3 * histories * CASES, 0.5, 0.5)
    white = white_of(spread, launches)
    for pool in (True, False):
        found = by_history(stepped(judge(logs + step, white, CASES, pool), at), CASES)
        rows.append(entry(f"20 % steps found, drift phi 0.5 + as much launch noise, {every}, "
                          f"{HOW[pool]}", found))  # fmt: skip
        rows.append(null_entry(f"histories of {CASES} null series (drift phi 0.5 + as much launch "
                               f"noise) with any false change point, {HOW[pool]}",
                               any_false(judge(logs, white, CASES, pool)), pool))  # fmt: skip
    count = 10 * histories
    nulls = {
        "phi 0.4-0.6 (uniform, series by series)": np.concatenate(
            [drift(rng, 1, NIGHTS, phi) for phi in rng.uniform(0.4, 0.6, count * CASES)]
        ),
        "phi 0.5, 10 % of the variance one drift shared by the history": shared(rng, count, 0.1),
        "phi 0.5, 20 % of the variance one drift shared by the history": shared(rng, count, 0.2),
    }
    for label, y in nulls.items():
        rows.append(null_entry(f"histories of {CASES} null series ({label}) with any false change "
                               "point", any_false(judge(y * NIGHT_SD, cases=CASES))))  # fmt: skip
    return rows


def claim_rows(rng: np.random.Generator, histories: int) -> list[dict]:
    """What history says it would catch, checked: in histories of CASES rows (AR(1) phi 0.5,
    their phi pooled) and in series alone, each of a few rows with a finite claim
    (detectable_step: `would catch >= x % after k nights`) gets a step of its claimed size in its
    last k nights, alone, and is judged again: found (within NEAR nights) in about 80 % if the
    claim is right. The straight-line claim it replaced (the step over its standard error) is
    measured beside it."""
    from dataclasses import replace

    from distbench.stats.changepoint import detect_changes
    from distbench.stats.changepoint_reach import detectable_step

    rows: list[dict] = []
    for cases, after in ((CASES, 25), (CASES, 7), (1, 10), (1, 20)):
        for straight in (False, True):
            found, claims, blind = [], [], 0
            draw = np.random.default_rng(rng.integers(1 << 30))  # its own stream: rows apart
            for _ in range(histories if cases > 1 else 10 * histories):
                y = drift(draw, cases, NIGHTS, 0.5) * NIGHT_SD
                null = detect_changes(list(y), [0.0] * cases, 0.05, 0.05)
                for row in range(min(cases, 3)):
                    judged = replace(null[row], ranked=False) if straight else null[row]
                    claim = detectable_step(judged, after, 0.05)
                    if not math.isfinite(claim) or claim > 9:
                        blind += 1
                        continue
                    z = y.copy()
                    z[row] += math.log1p(claim) * (np.arange(NIGHTS) >= NIGHTS - after)
                    res = detect_changes(list(z), [0.0] * cases, 0.05, 0.05)[row]
                    claims.append(claim)
                    found.append(stepped([[(f.index, f.effect) for f in res.found]],
                                         NIGHTS - after)[0])  # fmt: skip
            where = f"a history of {CASES}, phi pooled" if cases > 1 else "a series alone"
            how = "the straight-line claim (before)" if straight else "the simulated claim"
            median = float(np.median(claims)) if claims else math.nan
            label = (f"claimed step {after} nights before the end, AR(1) phi 0.5, {where}, {how}: "
                     f"found at its claimed size (median claim {median:.0%}; "
                     f"{blind} of {blind + len(claims)} claim nothing)")  # fmt: skip
            if found:
                rows.append(entry(label, share(found)))
            else:  # every claim is 'nothing': what share of rows say so
                rows.append(entry(f"claimed step {after} nights before the end, AR(1) phi 0.5, "
                                  f"{where}, {how}: share of rows that claim nothing",
                                  share([True] * blind)))  # fmt: skip
    return rows


def shared(rng: np.random.Generator, histories: int, common: float) -> np.ndarray:
    """Null AR(1) series (phi 0.5), CASES a history, `common` of whose variance is one drift
    that every series of the history shares."""
    out = []
    for _ in range(histories):
        mine = drift(rng, CASES, NIGHTS, 0.5) * math.sqrt(1 - common)
        out.append(mine + drift(rng, 1, NIGHTS, 0.5) * math.sqrt(common))
    return np.concatenate(out)


RECORDED = ROOT / "tests" / "data" / "launches-nightly-cpu.json.gz"
RECORDED_AFTER = 10
"""Nights after the step injected into the recorded histories."""


def recorded_histories(per_night: int) -> list[tuple[str, np.ndarray, np.ndarray, list[str]]]:
    """Real histories of this box: each recorded group (session) of the shipped nightly matrix
    (tests/data/launches-nightly-cpu.json.gz, ci/stats_data.py) with 24 nights or more, its
    launches in the order they ran, `per_night` a night (ci/nightly.sh's default is 3; 2 and 1
    here, for more nights: a session's nights are minutes apart, not a day). Per group: (name,
    log night values rows x nights, launch noise of each row's night value, each row's
    primitive), the rows every launch of the group measured."""
    from stats_data import load_fixture

    recorded = load_fixture(RECORDED)
    out = []
    for group in sorted({one.group for one in recorded.launches if one.started}):
        launches = sorted(recorded.group(group), key=lambda one: one.started)
        nights = [launches[i : i + per_night] for i in range(0, len(launches) - per_night + 1,
                                                             per_night)]  # fmt: skip
        if len(nights) < 24:
            continue
        kept = [r for r in range(len(recorded.keys)) if all(len(o.trials[r]) for o in launches)]
        logs = np.array([[[math.log(float(np.min(o.trials[r]))) for o in night] for night in nights]
                         for r in kept])  # fmt: skip
        spread = logs.var(axis=2, ddof=1) if per_night > 1 else np.full(logs.shape[:2], np.nan)
        launches_a_night = np.full(logs.shape[:2], per_night)
        primitive = [recorded.keys[r]["primitive"] for r in kept]
        out.append((group, logs.mean(axis=2), white_of(spread, launches_a_night), primitive))
    return out


PRIMITIVES = ["send_recv"] * 36 + [
    p
    for p in ("all_gather", "all_reduce", "all_to_all", "broadcast", "reduce", "reduce_scatter")
    for _ in range(12)
]
"""The shipped nightly matrix's 108 rows, by primitive (the box rows' histories)."""


def box_rows(rng: np.random.Generator, histories: int) -> list[dict]:
    """Histories of the matrix's 108 rows whose drift (AR(1) phi 0.5, NIGHT_SD) is in part one
    drift of the box every row shares (0, a half of the variance), judged as `distbench
    history` judges them, relative (the default) and absolute: null histories with any change
    point in a case, and in the whole run; a 20 % step at night 40 of all_reduce's 12 rows found
    in them, and change points in the other rows; every row 20 % slower, found in the whole run
    (relative) or in the rows (absolute)."""
    rows: list[dict] = []
    at = 40
    step = STEP * (np.arange(NIGHTS) >= at)
    ours = np.array([p == "all_reduce" for p in PRIMITIVES])
    for common in (0.5, 0.0):
        drawn = [
            drift(rng, CASES, NIGHTS, 0.5) * NIGHT_SD * math.sqrt(1 - common)
            + drift(rng, 1, NIGHTS, 0.5) * NIGHT_SD * math.sqrt(common)
            for _ in range(histories)
        ]
        label = f"{common:.0%} of the variance one drift of the box" if common else "no box drift"
        for relative in (True, False):
            how = RELATIVE[relative]
            null = [judge_recorded(y, np.zeros(CASES), PRIMITIVES, relative) for y in drawn]
            rows.append(null_entry(f"histories of {CASES} null rows (phi 0.5, {label}), {how}: "
                                   "any change point in a case",
                                   share([any(found) for found, _w in null])))  # fmt: skip
            if relative:
                rows.append(null_entry("  ... any change point in the whole run (a family of its "
                                       "own)", share([bool(w) for _f, w in null])))  # fmt: skip
            one = [judge_recorded(y + np.where(ours[:, None], step, 0.0), np.zeros(CASES),
                                  PRIMITIVES, relative) for y in drawn]  # fmt: skip
            hits = [h for found, _w in one for h, r in zip(stepped(found, at), ours, strict=True)
                    if r]  # fmt: skip
            rows.append(entry(f"  {how}: 20 % steps found, all_reduce's 12 rows slower from "
                              f"night {at}", by_history(hits, int(ours.sum()))))  # fmt: skip
            others = [len(f) for found, _w in one for f, r in zip(found, ours, strict=True)
                      if not r]  # fmt: skip
            spread = 100 * float(np.std(others, ddof=1)) / math.sqrt(len(others))
            rows.append(entry("  ... change points per 100 other rows",
                              (100 * float(np.mean(others)), spread)))  # fmt: skip
            every = [judge_recorded(y + step, np.zeros(CASES), PRIMITIVES, relative)
                     for y in drawn]  # fmt: skip
            if relative:
                found = share([stepped([w], at)[0] for _f, w in every])
                rows.append(entry("  ... every row 20 % slower: found in the whole run", found))
            else:
                found = by_history([h for f, _w in every for h in stepped(f, at)], CASES)
                rows.append(entry("  ... every row 20 % slower: found in the rows", found))
    return rows


def synthetic_histories(
    count: int, nights: int, at: int, seed: int
) -> list[tuple[np.ndarray, np.ndarray, list[str]]]:
    """Histories as ci/bench_history.py writes its nights (the ones history's tests read): each
    of the matrix's 108 rows takes one recorded launch's 12 trials, and each night's value is
    the fastest of them resampled; broadcast's rows 20 % slower from night `at` (`at` >= nights:
    none). Rows differ in noise by two orders of magnitude and share no drift of the box. Per
    history: (log values rows x nights, whether each row is broadcast's, each row's primitive)."""
    import random

    from bench_history import night_trials, read_launches

    cases, recorded = read_launches()
    names = sorted(recorded)
    out = []
    for k in range(count):
        rng = random.Random(seed * 1_000 + k)
        trials = [recorded[rng.choice([n for n in names if recorded[n][i]])][i]
                  for i in range(len(cases))]  # fmt: skip
        primitive = [c["primitive"] for c in cases]
        slowed = np.array([p == "broadcast" for p in primitive])
        logs = np.log([[min(night_trials(t, rng, 1.2 if s and n >= at else 1.0))
                        for n in range(nights)]
                       for t, s in zip(trials, slowed, strict=True)])  # fmt: skip
        out.append((logs, slowed, primitive))
    return out


def synthetic_rows(count: int, seed: int) -> list[dict]:
    """history on ci/bench_history.py's nights (synthetic_histories), relative (the default),
    relative with compare's plain-mean votes (detect.row_weights replaced here, on the
    benchmark's side), and absolute: broadcast's 20 % step found in its rows, change points in
    the other rows, and in null histories."""
    from distbench.reports.history import detect

    weights = detect.row_weights
    rows: list[dict] = []
    for nights, at in ((30, 22), (60, 40)):
        slowed_histories = synthetic_histories(count, nights, at, seed)
        null = synthetic_histories(count, nights, nights, seed + 1)
        for how, relative, plain in ((RELATIVE[True], True, False),
                                     ("relative, plain-mean votes", True, True),
                                     (RELATIVE[False], False, False)):  # fmt: skip
            detect.row_weights = (lambda d: np.ones(d.shape[1])) if plain else weights
            try:
                hits, others, false = [], [], []
                per = int(slowed_histories[0][1].sum())  # broadcast's rows in each history
                for logs, slowed, primitive in slowed_histories:
                    found, _whole = judge_recorded(logs, np.zeros(len(logs)), primitive, relative)
                    hits += [h for h, s in zip(stepped(found, at), slowed, strict=True) if s]
                    others += [len(f) for f, s in zip(found, slowed, strict=True) if not s]
                for logs, _slowed, primitive in null:
                    found, _whole = judge_recorded(logs, np.zeros(len(logs)), primitive, relative)
                    false += [len(f) for f in found]
            finally:
                detect.row_weights = weights
            lead = "  "
            if relative and not plain:
                lead = (f"nights drawn as ci/bench_history.py writes them ({count} histories of "
                        f"{nights} nights; no drift of the box), ")  # fmt: skip
            rows.append(entry(f"{lead}{how}: 20 % steps of broadcast's rows from night {at} "
                              "found", by_history(hits, per)))  # fmt: skip
            rows.append(entry("  ... change points per 100 other rows",
                              (100 * float(np.mean(others)), 0.0)))  # fmt: skip
            rows.append(entry("  ... change points per 100 rows, null histories",
                              (100 * float(np.mean(false)), 0.0)))  # fmt: skip
    return rows


def judge_recorded(
    logs: np.ndarray, white: np.ndarray, primitive: list[str], relative: bool
) -> tuple[list[list[tuple[int, float]]], list[tuple[int, float]]]:
    """One recorded history judged as `distbench history` judges one (reports/history/detect.py
    judge_history: relative, each case beyond the rest of its run, or absolute): each row's
    change points (position, log step), and the whole-run series' (relative mode; else none)."""
    from distbench.reports.history.detect import Series, judge_history

    nights = np.arange(logs.shape[1])
    series = [
        Series(f"row {i}", "comm", "time_us_min", 0, nights, np.exp(y), float(w), p)
        for i, (y, w, p) in enumerate(zip(logs, white, primitive, strict=True))
    ]
    _series, judged = judge_history(series, logs.shape[1], relative)
    found = [[(f.index, f.effect) for f in j.found] for j in judged]
    whole = found[len(series) :]
    return found[: len(series)], whole[0] if whole else []


RELATIVE = {True: "relative (the default)", False: "absolute (--absolute)"}


def recorded_rows() -> list[dict]:
    """history on real histories of this box (recorded_histories), 2 launches a night and 1,
    relative (each case judged beyond the rest of its run, the whole run a series of its own)
    and absolute: no step injected (within a session the box's level moved for every row at
    once, in g7 and g10: absolute history reports it in every case); a 25 % step from
    RECORDED_AFTER nights before the end of the rows of 1 or 3 primitives (found in theirs, and
    the change points in the others'), and of every row (the whole run slower: relative mode
    finds it in the whole-run series)."""
    rows: list[dict] = []
    for per_night in (2, 1):
        histories = recorded_histories(per_night)
        names = ", ".join(f"{g} ({y.shape[1]})" for g, y, _w, _p in histories)
        sessions = (f"recorded sessions of this box as histories, {per_night} launch(es) a "
                    f"night ({names} nights)")  # fmt: skip
        for relative in (True, False):
            how = RELATIVE[relative]
            nulls = [judge_recorded(y, w, p, relative) for _g, y, w, p in histories]
            counts = np.array([len(f) for found, _whole in nulls for f in found], float)
            lead = f"{sessions}, " if relative else "  "
            rows.append(entry(f"{lead}{how}: change points per 100 series, no step",
                              (100 * counts.mean(),
                               100 * counts.std(ddof=1) / math.sqrt(len(counts)))))  # fmt: skip
            if relative:
                rows.append(entry("  ... sessions whose whole run has a change point, no step",
                                  share([bool(whole) for _found, whole in nulls])))  # fmt: skip
            for chosen in (1, 3, None):
                hits, others, whole_hits = [], [], []
                for _g, y, w, primitive in histories:
                    at = y.shape[1] - RECORDED_AFTER
                    slowed = sorted(set(primitive))[:chosen]
                    rows_in = np.array([p in slowed for p in primitive])
                    ramp = math.log(1.25) * (np.arange(y.shape[1]) >= at)
                    found, whole = judge_recorded(
                        y + np.where(rows_in[:, None], ramp, 0.0), w, primitive, relative
                    )
                    hits += [h for h, s in zip(stepped(found, at), rows_in, strict=True) if s]
                    others += [len(f) for f, s in zip(found, rows_in, strict=True) if not s]
                    whole_hits += stepped([whole], at)
                label = "every row" if chosen is None else f"the rows of {chosen} of 7 primitives"
                rows.append(entry(f"  {how}: 25 % steps found in their rows, {label} slower "
                                  f"from {RECORDED_AFTER} nights before the end",
                                  share(hits)))  # fmt: skip
                if others:
                    other = (100 * float(np.mean(others)), 0.0)
                    rows.append(entry("  ... change points per 100 series of the other "
                                      "primitives", other))  # fmt: skip
                if relative and chosen is None:
                    rows.append(entry("  ... found in the whole-run series",
                                      share(whole_hits)))  # fmt: skip
    return rows


def outlier_share() -> float:
    """Of the recorded launches' fastest trials, the share beyond 4 robust sd of their row's
    median (the sd from the row's median absolute deviation)."""
    data = json.loads(LAUNCHES.read_text())
    names = sorted(data["launches"])
    logs = np.array(
        [[math.log(min(t)) if t else math.nan for t in data["launches"][n]] for n in names]
    )
    deviation = logs - np.nanmedian(logs, axis=0)
    scale = 1.4826 * np.nanmedian(np.abs(deviation), axis=0)
    z = np.abs(deviation / scale)
    return float(np.mean(z[np.isfinite(z)] > 4))


def fitted_phi(logs: np.ndarray) -> np.ndarray:
    """Each series' phi as history fits it (on the normal scores of its nights)."""
    from distbench.stats.changepoint_model import estimate_noise, normal_scores

    scores, white, _scale = normal_scores(logs, np.zeros(len(logs)))
    return estimate_noise(scores, white).phi


def phi_spread(rng: np.random.Generator, reps: int) -> tuple[float, float]:
    """The sd of history's fitted phi over null series with phi 0.5, and its standard error."""
    phi = fitted_phi(drift(rng, reps, NIGHTS, 0.5) * NIGHT_SD)
    return float(phi.std(ddof=1)), float(phi.std(ddof=1) / math.sqrt(2 * (reps - 1)))


def chunks(found: list[list[tuple[int, float]]], size: int) -> list[list[tuple[int, float]]]:
    """Each history's change points, its `size` series' together."""
    return [[cp for f in found[i : i + size] for cp in f] for i in range(0, len(found), size)]


def table(rows: list[dict]) -> str:
    lines = ["| measure | value | MC error | target | ok |", "| --- | ---: | ---: | --- | --- |"]
    for r in rows:
        ok = "" if r["ok"] is None else ("yes" if r["ok"] else "NO")
        lines.append(
            f"| {r['name']} | {r['value']:.3g} | {r['mc_error']:.2g} | {r['target']} | {ok} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 replications a row")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    start = time.perf_counter()
    rows = run(args.quick, args.seed)
    out(table(rows))
    out(f"\n{'quick, ' if args.quick else ''}seed {args.seed}: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
