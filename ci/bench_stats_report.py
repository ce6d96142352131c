"""Coverage of the report's speedup intervals, by resampling recorded launches with named added
noise; never by drawing from the model under test. A benchmark, not a timed test.

`distbench report` prints each row's speedup (and every size of a case together) with the core's
95 % interval of the same launch values compare judges, judged without the relative contrast
(reports/report/verdicts.py): the raw speedup. compare's own intervals (relative to the rest of the
run) are covered by ci/bench_stats.py. Here, A/A (the truth: speedup 1), on the held-out groups of
tests/data/launches-nightly-cpu.json.gz, metric time_us_p50 (the report's), the noises of
ci/stats_coverage.py:

- one launch a side: what a report of two single runs judges (the stated default spread while
  the noise is learnt);
- a night of 2 launches against a baseline window of 8 nights of 2 launches.

`--legacy` reads 0.2.0's 13 launches of the nightly matrix instead (tests/data/gate-launches.json,
recorded within one hour: one group, nothing held out).

    python ci/bench_stats_report.py            # 1,000 replications per figure
    python ci/bench_stats_report.py --legacy   # 0.2.0's launches
    python ci/bench_stats_report.py --quick    # 40
    python ci/bench_stats_report.py --metric time_us_min   # the nightly report's (--metric min)
    python ci/bench_stats_report.py --held-out g5 --fitted-default g0,g1,g2,g3,g4,g7,g8,g9,g10,g11

`--fitted-default GROUPS` asks what the stated default spread (the 90th percentile of the rows'
spreads, with 4 degrees of freedom: distbench.stats.defaults) would become if it were calibrated
instead: the scaled inverse chi-square prior fitted to the rows' spreads inside GROUPS (s0, d0,
limma's fit, as the core fits a window's rows), a launch value's default variance s0^2 + its own
within part with the Satterthwaite degrees of freedom of that sum (the within part taken as
known; at most 30). `--held-out` names the groups the launches are drawn from (never one of
GROUPS). docs/gate.md#the-default-spread gives what it showed.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its siblings, however it is loaded
from stats_coverage import NOISES, Coverage
from stats_data import (
    STATISTICS,
    Values,
    excess_variances,
    launch_values,
    load_fixture,
    load_legacy,
    nights_of,
)
from stats_gate import Gate, Judge

from distbench.stats.components import Prior, fit_prior
from distbench.stats.engine import Outcome, Settings, size_band

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "data" / "launches-nightly-cpu.json.gz"
LEGACY = REPO / "tests" / "data" / "gate-launches.json"
HELD_OUT = ("g3",)
METRIC = "time_us_p50"


def covered(outcome: Outcome, bands: bool) -> float:
    """The share of the rows' (or the bands') intervals that hold a change of 0."""
    found = [
        low <= 0.0 <= high
        for judged in (outcome.bands if bands else outcome.rows)
        if judged.shift is not None
        for low, high in [judged.interval()]
    ]
    return float(np.mean(found)) if found else math.nan


def replicate(
    judge: Judge, sides: tuple[list[list[int]], list[int]], noise: str,
    rng: np.random.Generator,
) -> Outcome:  # fmt: skip
    base, current = sides
    nb, rows = sum(len(n) for n in base), len(judge.keys)
    added = NOISES[noise](rng, nb, len(current), rows)
    base_y = judge.values.y[[i for n in base for i in n]] + added[:nb]
    return judge.night(base, current, added[nb:], base_y)


def draw(
    scenario: str, launches: list[int], nights: list[list[int]], window: int,
    rng: np.random.Generator,
) -> tuple[list[list[int]], list[int]]:  # fmt: skip
    if scenario == "one launch a side":
        a, b = rng.choice(launches, size=2, replace=False)
        return [[int(a)]], [int(b)]
    picks = rng.choice(len(nights), size=window + 1, replace=False)
    return [nights[i] for i in picks[:window]], nights[picks[window]]


def fitted_defaults(values: Values, keys: list[dict[str, str]], groups: list[str]) -> list[Prior]:
    """Each row's default prior, calibrated on GROUPS (the module docstring): per size band (a
    band without rows of its own, mid's)."""
    bands = [size_band(k) for k in keys]
    fitted: dict[str, Prior] = {}
    for band in sorted(set(bands)):
        columns = [i for i, b in enumerate(bands) if b == band]
        variances, dfs = excess_variances(values, columns, groups)
        prior = fit_prior(variances.tolist(), dfs, f"fitted on {','.join(groups)}")
        if prior is not None:
            fitted[band] = prior
    within = np.nanmean(values.within, axis=0)
    priors = []
    for band, w in zip(bands, within.tolist(), strict=True):
        between = fitted.get(band, fitted["mid"])
        total = between.variance + (w if math.isfinite(w) else 0.0)
        df = min(30.0, between.df * total**2 / between.variance**2)
        priors.append(Prior(total, df, between.source))
    return priors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--legacy", action="store_true", help="0.2.0's 13 launches (one group)")
    parser.add_argument(
        "--metric", default=METRIC, choices=sorted(STATISTICS), help="the report's --metric"
    )
    parser.add_argument("--held-out", default=",".join(HELD_OUT), help="the groups judged")
    parser.add_argument(
        "--fitted-default",
        default="",
        metavar="GROUPS",
        help="judge with a default spread calibrated on these groups instead",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    recorded = load_legacy(LEGACY, "legacy") if args.legacy else load_fixture(args.fixture)
    values = launch_values(recorded, args.metric)
    held = (
        ["legacy"] if args.legacy else [g for g in args.held_out.split(",") if g in recorded.groups]
    )
    fit_on = [g for g in args.fitted_default.split(",") if g]
    if set(fit_on) & set(held):
        parser.error("--fitted-default's groups must not be judged (--held-out)")
    launches = [i for i, g in enumerate(values.groups) if g in held]
    nights = [n for g in held for n in nights_of(values, g, 2)]
    gate = Gate(metric=args.metric, settings=Settings(relative=False))  # the report's raw speedups
    judge = Judge(values, recorded.keys, gate)
    if fit_on:
        judge.defaults = fitted_defaults(values, recorded.keys, fit_on)
    reps = 40 if args.quick else args.reps
    print(
        f"report's raw speedup intervals, A/A: {len(launches)} launches "
        f"({', '.join(held)}{': not held out' if args.legacy else ', held out'}), "
        f"{len(nights)} nights; {len(recorded.keys)} rows; {reps} "
        f"replications per figure; metric {args.metric}; default spread: "
        f"{'fitted on ' + ','.join(fit_on) if fit_on else 'stated (distbench.stats.defaults)'}\n"
    )
    print("| scenario | noise | rows: coverage | bands: coverage |")
    print("|---|---|---:|---:|")
    for s, scenario in enumerate(("one launch a side", f"a night against {args.window} nights")):
        for i, noise in enumerate(NOISES):
            rng = np.random.default_rng(args.seed + 100 * s + i)
            rows, bands = Coverage("rows", []), Coverage("bands", [])
            for _ in range(reps):
                sides = draw(scenario, launches, nights, args.window, rng)
                outcome = replicate(judge, sides, noise, rng)
                for part, share in (
                    (rows, covered(outcome, False)),
                    (bands, covered(outcome, True)),
                ):
                    if math.isfinite(share):
                        part.covered.append(share)
            cells = [f"{c.row()['value']} {c.row()['interval']}" for c in (rows, bands)]
            print(f"| {scenario} | {noise} | {cells[0]} | {cells[1]} |", flush=True)
    command = " ".join(argv if argv is not None else sys.argv[1:])
    print(f"\n{time.perf_counter() - started:.0f} s; python ci/bench_stats_report.py {command}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
