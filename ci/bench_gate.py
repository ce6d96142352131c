"""How often does the nightly gate fail? Replays nights from real samples of this box and prints,
per decision rule, the share of unchanged nights that fail (A/A) and of nights with one primitive
25 % slower that fail naming it (A/B). Not a timed test: the figures behind compare's defaults.

    for i in $(seq -w 1 12); do                # >= 10 independent launches of one config
        distbench sweep --config ci/sweep-nightly-cpu.toml --out results/gate/L$i
    done
    python ci/bench_gate.py results/gate                       # the table (docs)
    python ci/bench_gate.py results/gate --export tests/data/gate-launches.json
    python ci/bench_gate.py tests/data/gate-launches.json      # the same from the canned data
    python ci/bench_gate.py --pytest-json DIR   # the pytest-benchmark kit: --benchmark-json files
                                                # of >= 10 runs of ci/bench-tests.sh
    python ci/bench_gate.py tests/data/gate-launches.json --model 0.02,0.01 --slowdown 1.1
                                                # a quiet node from a noise model (no launches)

A night's baseline is `launches` launches (the shipped nightly: 2, ci/nightly.sh --launches) and
its current run as many others (never the same ones), each row's samples drawn without
replacement from each launch's trials, the launches of a side pooled as compare pools a run's
launch-N folders (reports/launches.py): so the spread from night to night is the spread between
launches, not between the trials of one. The export rounds samples to 0.1 us; a drawn sample is
spread uniformly over its rounding interval, so that ties are as rare as in a real run.
A/B multiplies the current samples of one primitive (every size, every dtype, every world size)
by --slowdown; the night counts when it fails and a failing row names that primitive.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from distbench.reports.checks import METRICS, Threshold, Thresholds
from distbench.reports.compare import EXIT_OK, REGRESSED, GateRule, compare_runs

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its sibling, however it is loaded
from gate_launches import (
    Launch,
    export,
    load_launches,
    model_launches,
    night,
    pooled_night,
)
from gate_thresholds import spread_thresholds, write_thresholds

__all__ = ["export", "load_launches", "night", "pooled_night"]  # the tests use them from here


@dataclass(frozen=True)
class Alternative:
    """One decision rule to replay, with the trials per night it assumes."""

    label: str
    trials: int
    rule: GateRule
    metric: str = "time_us_p50"
    margin: float | None = None
    """Per-row thresholds from the measured spread: the largest slowdown between the other
    launches (never the night's own: leave-them-out), raised to this power (1.5: half as
    much again in log terms), at least the rule's default threshold."""
    launches: int = 1
    """Launches pooled on each side of a night (ci/nightly.sh --launches)."""


@dataclass(frozen=True)
class Rates:
    aa_failed: int
    ab_caught: int
    ab_other: int
    """A/B nights that also failed a row of another primitive."""
    nights: int


def replay(
    launches: dict[str, Launch], alt: Alternative, nights: int, seed: int, factor: float
) -> Rates:
    """A/A and A/B over `nights` drawn nights each (the same draws for every alternative)."""
    rng = random.Random(seed)
    names = sorted(launches)
    primitives = sorted({dict(k)["primitive"] for launch in launches.values() for k in launch})
    metric = METRICS[alt.metric]
    cache: dict[frozenset[str], GateRule] = {}
    aa = caught = other = 0
    k = alt.launches
    for i in range(nights):
        picked = rng.sample(names, 2 * k)
        base_names, cur_names = tuple(picked[:k]), tuple(picked[k:])
        rule = alt.rule
        if alt.margin is not None:
            if (used := frozenset(picked)) not in cache:
                rest = [n for n in names if n not in used]
                floor = alt.rule.thresholds.default.value
                bands = spread_thresholds(launches, rest, alt.metric, alt.margin, floor)
                cache[used] = replace(alt.rule, thresholds=bands)
            rule = cache[used]
        base = pooled_night(launches, base_names, alt.trials, rng, None, 1.0)
        same = pooled_night(launches, cur_names, alt.trials, rng, None, 1.0)
        aa += compare_runs(base, same, metric, rule).exit_code != EXIT_OK
        slow = primitives[i % len(primitives)]
        slowed = pooled_night(launches, cur_names, alt.trials, rng, slow, factor)
        result = compare_runs(base, slowed, metric, rule)
        failing = {r.key.get("primitive") for r in result.rows if r.verdict == REGRESSED}
        failing |= {p.primitive for p in result.primitives if p.regressed}
        caught += slow in failing
        other += bool(failing - {slow})
    return Rates(aa, caught, other, nights)


def percent(text: str) -> Thresholds:
    return Thresholds(Threshold(float(text.rstrip("%")), True))


SHIPPED = GateRule(thresholds=percent("5%"))
ROWS = replace(SHIPPED, by_primitive=False)
PLAIN = replace(ROWS, fdr=False, adjacent=False, min_samples=1)
SHIPPED_METRIC, SHIPPED_MARGIN, SHIPPED_TRIALS = "time_us_min", 1.5, 12


def alternatives() -> list[Alternative]:
    """The shipped defaults first, then what was tried against them. `KxT`: K launches pooled on
    each side of a night, T trials each; `rows:` the per-row rule alone; `+prim E`: and the
    per-primitive test (reports/primitive_rule.py), minimum effect E."""
    m, t, p50 = SHIPPED_METRIC, SHIPPED_TRIALS, "time_us_p50"
    at50 = replace(ROWS, thresholds=percent("50%"))
    prim = {e: replace(SHIPPED, min_effect=e) for e in (0.0, 0.1, 0.125, 0.2)}
    no_bh = replace(SHIPPED, fdr=False)
    rule = "spread^1.5, BH, adjacent"
    return [
        Alternative(f"shipped: 2x12, min, {rule} +prim 15%", t, SHIPPED, m, 1.5, 2),
        Alternative(f"rows: 1x12, min, {rule} (0.1.x)", t, ROWS, m, 1.5),
        Alternative(f"1x12, min, {rule} +prim 15% (0.2.0)", t, SHIPPED, m, 1.5),
        Alternative(f"2x6, min, {rule} +prim 15%", 6, SHIPPED, m, 1.5, 2),
        Alternative(f"3x12, min, {rule} +prim 15%", t, SHIPPED, m, 1.5, 3),
        Alternative(f"2x12, min, {rule} +prim 10%", t, prim[0.1], m, 1.5, 2),
        Alternative(f"2x12, min, {rule} +prim 12.5%", t, prim[0.125], m, 1.5, 2),
        Alternative(f"2x12, min, {rule} +prim 20%", t, prim[0.2], m, 1.5, 2),
        Alternative("2x12, min, spread^1.5, +prim 15% without BH", t, no_bh, m, 1.5, 2),
        Alternative(f"rows: 2x12, min, {rule}", t, ROWS, m, 1.5, 2),
        Alternative(f"2x12, p50, {rule} +prim 15%", t, SHIPPED, p50, 1.5, 2),
        Alternative(f"1x12, min, {rule} +prim 0%", t, prim[0.0], m, 1.5),
        Alternative(f"1x12, min, {rule} +prim 10%", t, prim[0.1], m, 1.5),
        Alternative(f"1x12, min, {rule} +prim 20%", t, prim[0.2], m, 1.5),
        Alternative("1x12, min, spread^1.5, +prim 15% without BH", t, no_bh, m, 1.5),
        Alternative(f"1x12, p50, {rule} +prim 15%", t, SHIPPED, p50, 1.5),
        Alternative(f"1x6, min, {rule} +prim 15%", 6, SHIPPED, m, 1.5),
        Alternative("rows: 1x3, p50, 5%, p<=0.05 (0.1.0)", 3, PLAIN),
        Alternative("rows: 1x12, p50, 5%, p<=0.05", t, PLAIN),
        Alternative("rows: 1x12, p50, 5%, BH, adjacent", t, ROWS),
        Alternative("rows: 1x12, min, 50%, BH, adjacent", t, at50, m),
        Alternative("rows: 1x12, min, spread^1, BH, adjacent", t, ROWS, m, 1.0),
    ]


def kit_table(folder: Path, slowdown: float) -> list[str]:
    """A/A and A/B of --benchmark-compare-fail=FIELD:T% over every ordered pair of saved runs:
    A/A fails when any benchmark is worse by more than T %, A/B scales one benchmark by
    `slowdown` and counts it when that benchmark fails."""
    runs = []
    for path in sorted(folder.glob("*.json")):
        body = json.loads(path.read_text())
        runs.append({b["name"]: b["stats"] for b in body["benchmarks"]})
    lines = [f"# {len(runs)} runs of the pytest-benchmark kit; A/B = one benchmark x{slowdown:g}"]
    lines.append(f"{'--benchmark-compare-fail':<26} {'A/A failed':>10} {'A/B caught':>10}")
    pairs = [(a, b) for a in runs for b in runs if a is not b]
    for field in ("min", "median"):
        for percent in (10, 25, 50, 100, 150):
            limit = 1 + percent / 100
            aa = sum(any(b[k][field] > a[k][field] * limit for k in a) for a, b in pairs)
            ab = [b[k][field] * slowdown > a[k][field] * limit for a, b in pairs for k in a]
            lines.append(
                f"{field + ':' + str(percent) + '%':<26} {aa / len(pairs):>10.1%} "
                f"{sum(ab) / len(ab):>10.1%}"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "data", type=Path, nargs="?", help="folder of launch run directories, or JSON"
    )
    parser.add_argument("--pytest-json", type=Path, help="folder of --benchmark-json files")
    parser.add_argument(
        "--model",
        metavar="SPREAD,JITTER",
        help="replace the launches by 13 from a noise model with the same rows: lognormal sd of "
        "a row's level between launches, and of a trial within one (e.g. 0.02,0.01)",
    )
    parser.add_argument("--nights", type=int, default=200, help="nights per rate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--slowdown", type=float, default=1.25, help="A/B factor, e.g. 1.25")
    parser.add_argument("--export", type=Path, help="write the launches' samples as JSON")
    parser.add_argument("--only-shipped", action="store_true", help="replay the defaults only")
    parser.add_argument(
        "--write-thresholds", type=Path, help="write the shipped per-row thresholds (TOML)"
    )
    parser.add_argument(
        "--margin",
        type=float,
        default=SHIPPED_MARGIN,
        help="power on the largest measured slowdown for --write-thresholds (1.5 on a shared "
        "box; 1.0 met A/A and a 10%% A/B on a quiet node's noise model)",
    )
    args = parser.parse_args(argv)
    if args.pytest_json:
        print("\n".join(kit_table(args.pytest_json, args.slowdown)))
        return 0
    if args.data is None:
        parser.error("give the launches (a folder or a JSON export), or --pytest-json DIR")
    launches = load_launches(args.data)
    if args.model:
        spread, jitter = (float(x) for x in args.model.split(","))
        launches = model_launches(launches, spread, jitter, 13, args.seed)
    if len(launches) < 3:
        print(f"bench_gate: {args.data} holds {len(launches)} launches; need >= 3", file=sys.stderr)
        return 2
    if args.export:
        export(launches, args.export)
    if args.write_thresholds:
        names = sorted(launches)
        floor = SHIPPED.thresholds.default.value
        bands = spread_thresholds(launches, names, SHIPPED_METRIC, args.margin, floor)
        about = (
            f"Per-row thresholds from the spread of {len(names)} launches on this box (written by\n"
            f"python ci/bench_gate.py DATA --write-thresholds): the largest slowdown of\n"
            f"{SHIPPED_METRIC} between any two launches, to the power {args.margin:g}, at least"
            f" {floor:g}%.\nRegenerate on your own box from >= 10 launches (docs: the gate)."
        )
        write_thresholds(bands, args.write_thresholds, about)
    rows = len(next(iter(launches.values())))
    print(f"# {len(launches)} launches x {rows} rows; {args.nights} nights each; A/B = one "
          f"primitive x{args.slowdown:g} (every size); seed {args.seed}")  # fmt: skip
    print(
        f"{'rule (launches x trials a side)':<52} {'A/A failed':>10} {'A/B caught':>10} "
        f"{'A/B +other':>10}"
    )
    for alternative in alternatives()[: 1 if args.only_shipped else None]:
        if (needs := 2 * alternative.launches + 2) > len(launches):
            night = needs - 2
            print(f"{alternative.label:<52} needs {needs} launches ({night} a night, 2 spread)")
            continue
        rates = replay(launches, alternative, args.nights, args.seed, args.slowdown)
        n = rates.nights
        print(
            f"{alternative.label:<52} {rates.aa_failed / n:>10.1%} {rates.ab_caught / n:>10.1%} "
            f"{rates.ab_other / n:>10.1%}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
