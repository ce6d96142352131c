"""How far can a nightly verdict be trusted? Replays the shipped gate on recorded launches of the
nightly matrix and prints, with Clopper-Pearson intervals and Monte Carlo errors, every figure
the docs quote (docs/gate.md): false alarms on held-out nights against fixed baselines, catches
of 25 % slowdowns (every row of a primitive, one size band, one world size, one dtype), whether
detectable_change is calibrated, the coverage of every interval printed as "95 %" (compare and
report, precision, fit), and history's false change points. A benchmark, not a timed test. The
per-night rates also get a block interval (column `blocks`, ci/stats_blocks.py: windows and runs
of consecutive nights resampled), as the nights of one window, and of one episode of a shared
box, move together.

    python ci/bench_stats.py            # the tables (about 10 min on 2 cores)
    python ci/bench_stats.py --quick    # a smoke of every part (CI: tests/integration)
    python ci/bench_stats.py --spread --tune g0,g1   # the default spread (stats/defaults.py)
    python ci/bench_stats.py --spread --fixture tests/data/gate-launches-ddp.json   # DDP's
    python ci/bench_stats.py --only gate --per-night 3 --window 14 --join-baselines  # nightly.sh
    #   --launches 3 against --keep 14: windows across groups (none holds 42 launches)
    python ci/bench_stats.py --record g1=DIR g2=DIR --export tests/data/launches-nightly-cpu.json.gz

Recorded launches: `distbench sweep --config ci/sweep-nightly-cpu.toml --out DIR/Lnnn`, in groups
hours apart; two consecutive launches of a group make a night. The rule's knobs were tuned on the
groups named by --tune only; every rate is reported on nights of the --held-out groups, judged
against fixed baselines of --window nights drawn from the --baselines groups (recorded with this
version; a user's baseline is older than the nights it judges).
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its siblings, however it is loaded
from stats_coverage import NOISES, coverage
from stats_data import (
    Values,
    excess_variances,
    export,
    launch_values,
    load_fixture,
    load_legacy,
    merge,
    nights_of,
    record,
)
from stats_gate import (
    SLOWDOWN,
    Gate,
    Judge,
    Nights,
    Rate,
    fixed_baselines,
    rate_of,
    regressed,
    replay_fixed,
)

from distbench.stats.components import fit_prior
from distbench.stats.engine import Drift, Settings, size_band
from distbench.stats.family import primitive_of

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "data" / "launches-nightly-cpu.json.gz"
TUNE = ("g0", "g1", "g2")
HELD_OUT = ("g3",)
BASELINES = ("g1", "g2", "g3")
"""g0 is 0.2.0's 12 launches (an older distbench, tests/data/gate-launches-interleaved.json):
the default spread's source, never a baseline of nights the current version recorded."""


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def table(rows: list[dict[str, object]]) -> str:
    header = ["name", "value", "interval", "blocks", "target", "ok", "note"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells(r)[h] for h in header) + " |" for r in rows]
    return "\n".join(lines)


def cells(row: dict[str, object]) -> dict[str, str]:
    """A row's cells as the reader needs them, whichever part made it: the gate's rates come
    formatted; the other parts give a float value with its Monte Carlo error (mc_error) and a
    bool or None for ok. A coverage or precision figure (it has an `interval`) is a share, in %;
    history's figures are shares, counts per 100 series or nights, shown to 3 digits."""
    value, error, ok = row.get("value", ""), row.get("mc_error"), row.get("ok")
    interval = str(row.get("interval") or "")
    if isinstance(value, float):
        value = f"{value:.1%}" if interval else f"{value:.3g}"
        if not interval and isinstance(error, float) and math.isfinite(error):
            interval = f"+-{error:.2g} (MC)"
    verdict = {True: "yes", False: "NO", None: ""}.get(ok, str(ok))  # type: ignore[call-overload]
    return {
        "name": str(row.get("name", "")), "value": str(value), "interval": interval,
        "blocks": str(row.get("blocks", "")), "target": str(row.get("target", "")),
        "ok": verdict, "note": str(row.get("note", "")),
    }  # fmt: skip


def gate_section(
    judge: Judge, held: dict[str, list[list[int]]], window: int, baselines: Nights
) -> list[dict[str, object]]:
    aa, ab, seen, grid = replay_fixed(judge, held, window, say, baselines)
    total = rate_of(f"A/A overall, {len(aa)} fixed baselines of {window} nights", grid, "<= 5 %")
    total.ok = total.value <= 0.05
    for rate in ab:
        rate.target = ">= 95 %" if rate.name.endswith("every row of one primitive") else "(partial)"
        rate.ok = rate.value >= 0.95 if rate.target == ">= 95 %" else None
    silent = Rate("partial slowdowns missed while an affected row claimed <= 25 %", 0, 0, "0")
    for kind, nights in seen.items():
        if kind == "every row of one primitive":
            continue
        for caught, detectable in nights:
            if not caught:
                silent.n += 1
                silent.hits += any(d <= SLOWDOWN - 1 for d in detectable)
    silent.ok = silent.hits == 0
    return [r.row() for r in (*aa, total, *ab, silent)]


def calibration(
    judge: Judge, held: dict[str, list[list[int]]], window: int, reps: int, seed: int
) -> list[dict[str, object]]:
    """Rows that claim detectable_change <= 25 %: one of them alone 25 % slower, caught?"""
    rng = np.random.default_rng(seed)
    every = [n for members in held.values() for n in members]
    claimed = Rate("one row 25 % slower, among rows claiming <= 25 %", 0, 0, ">= 80 %")
    for _ in range(reps):
        picks = rng.choice(len(every), size=window + 1, replace=False)
        base, night = [every[i] for i in picks[:window]], every[picks[window]]
        null = judge.night(base, night)
        quiet = [i for i, j in enumerate(null.rows) if j.detectable <= SLOWDOWN - 1]
        if not quiet:
            continue
        row = int(rng.choice(quiet))
        mask = np.zeros(len(judge.keys))
        mask[row] = math.log(SLOWDOWN)
        outcome = judge.night(base, night, mask)
        claimed.n += 1
        claimed.hits += regressed(outcome, primitive_of(judge.keys[row]))
    if not claimed.n:  # nothing to calibrate: say so, not nan
        claimed.note = "no row claimed <= 25 % on any night: every miss was announced"
        return [{**claimed.row(), "value": "0 rows", "interval": "", "ok": ""}]
    claimed.ok = claimed.value >= 0.80
    return [claimed.row()]


def coverage_section(
    judge: Judge, held: dict[str, list[list[int]]], window: int, reps: int, seed: int
) -> list[dict[str, object]]:
    pool = [n for members in held.values() for n in members]
    rows = []
    for i, noise in enumerate(NOISES):
        for ab in (False, True):
            parts = coverage(judge, pool, window, reps, seed + 10 * i + ab, noise, ab)
            for part in parts:
                rows.append(part.row())
                say(f"coverage: {rows[-1]['name']}: {rows[-1]['value']}")
    return rows


def spread_table(values: Values, keys: list[dict[str, str]], groups: tuple[str, ...]) -> str:
    """The between-launch sd (beyond each launch's within part) per size band, from launches of
    the same group (so drift between groups is not counted): its median and percentiles over
    rows, and the scaled inverse chi-square prior fitted to the rows' variances (limma's, as the
    core fits a window's rows: components.fit_prior), s0 and d0, which stats/defaults.py states.
    A row whose spread does not exceed its within part (an excess <= 0) has no variance to fit:
    the fit leaves it out, which errs wide."""
    lines = []
    bands = np.array([size_band(k) for k in keys])
    for band in ("small", "mid", "large", "none"):
        cols = bands == band
        if not cols.any():
            continue
        variances, dfs = excess_variances(values, np.flatnonzero(cols).tolist(), groups)
        found = np.sqrt(np.maximum(variances, 0.0))
        prior = fit_prior(variances.tolist(), dfs, "spread")
        fitted = (
            f"; fitted s0 {math.sqrt(prior.variance):.3f}, d0 {prior.df:.2f} "
            f"({int((variances <= 0).sum())} rows with no excess left out)"
            if prior
            else "; no fit"
        )
        median, p75, p90 = np.quantile(found, [0.5, 0.75, 0.9])
        lines.append(
            f"{band}: median {median:.3f}, p75 {p75:.3f}, p90 {p90:.3f} over {len(found)} "
            f"row-groups{fitted}"
        )
    return "\n".join(lines)


def baseline_nights(values: Values, groups: list[str], per_night: int, join: bool) -> Nights:
    """The nights fixed baseline windows are drawn from: per group, or (`join`) every group's
    nights as one sequence in recorded order, for windows longer than one group holds."""
    every = {g: nights_of(values, g, per_night) for g in groups}
    if join:
        return {"+".join(every): [night for nights in every.values() for night in nights]}
    return every


def parts(quick: bool, seed: int) -> list[dict[str, object]]:
    """The sections other modules contribute (history, precision and fit intervals)."""
    rows = []
    for name in ("bench_stats_history", "bench_stats_intervals"):
        try:
            module = importlib.import_module(name)
        except ImportError as error:
            say(f"{name}: not run ({error})")
            continue
        rows += module.run(quick=quick, seed=seed)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    parser.add_argument("--record", nargs="*", default=None, metavar="GROUP=DIR")
    parser.add_argument("--export", type=Path)
    parser.add_argument("--tune", default=",".join(TUNE))
    parser.add_argument("--held-out", default=",".join(HELD_OUT))
    parser.add_argument("--baselines", default=",".join(BASELINES), help="groups of the windows")
    parser.add_argument("--window", type=int, default=8, help="nights a baseline window holds")
    parser.add_argument(
        "--join-baselines",
        action="store_true",
        help="windows drawn from the --baselines groups' nights as one sequence (recorded order), "
        "for windows longer than one group holds (14 nights of 3 launches)",
    )
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--spread", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--metric", default=Gate.metric)
    parser.add_argument(
        "--per-night", type=int, default=2, help="launches a night (nightly.sh --launches)"
    )
    parser.add_argument("--drift", default="", help="row,band,broad,whole drift floors (sd, log)")
    parser.add_argument(
        "--only", default="gate,calibration,coverage,parts", help="the sections to run (tuning)"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.record is not None:
        pieces = [item.partition("=") for item in args.record]
        found = [load_legacy(Path(d), g) for g, _eq, d in pieces if d.endswith(".json")]
        runs = [(g, Path(d)) for g, _eq, d in pieces if not d.endswith(".json")]
        recorded = merge([*found, record(runs)] if runs else found)
        if args.export:
            export(recorded, args.export)
            say(
                f"wrote {args.export}: {len(recorded.launches)} launches, {len(recorded.keys)} rows"
            )
        return 0
    legacy = args.fixture.suffix == ".json"  # 0.2.0's exports: one group, "legacy"
    recorded = load_legacy(args.fixture, "legacy") if legacy else load_fixture(args.fixture)
    values = launch_values(recorded, args.metric)
    if args.spread:
        groups = ("legacy",) if legacy else tuple(args.tune.split(","))
        print(spread_table(values, recorded.keys, groups))
        return 0
    held_groups = [g for g in args.held_out.split(",") if g in recorded.groups]
    held = {g: nights_of(values, g, args.per_night) for g in held_groups}
    settings = Settings()
    if args.drift:
        row, band, broad, whole = (float(x) for x in args.drift.split(","))
        settings = Settings(drift=Drift(row=row, band=band, broad=broad, whole=whole))
    judge = Judge(values, recorded.keys, Gate(metric=args.metric, settings=settings))
    reps = 40 if args.quick else args.reps
    if args.quick:
        held = {g: n[: args.window + 3] for g, n in list(held.items())[:1]}
    nights = sum(len(n) for n in held.values())
    chosen = [g for g in args.baselines.split(",") if g in recorded.groups]
    every = baseline_nights(values, chosen, args.per_night, args.join_baselines)
    if args.quick:
        every = held
    if "gate" in args.only.split(",") and not fixed_baselines(every, args.window):
        held_nights = ", ".join(f"{g}: {len(n)}" for g, n in every.items())
        say(
            f"no baseline window of {args.window} nights of {args.per_night} launches: the "
            f"--baselines groups hold {held_nights} nights; give --join-baselines or a shorter "
            "--window"
        )
        return 2
    print(
        f"launches: {len(recorded.launches)} in groups {', '.join(recorded.groups)}; tuned on "
        f"{args.tune}; held out: {', '.join(held)} ({nights} nights judged); fixed baselines: "
        f"windows of {', '.join(every)}; baseline window {args.window} nights of "
        f"{args.per_night} launches; metric {args.metric}; drift "
        f"floors {judge.gate.settings.drift}\n"
    )
    only = set(args.only.split(","))
    rows = gate_section(judge, held, args.window, every) if "gate" in only else []
    if "calibration" in only:
        rows += calibration(judge, held, args.window, reps, args.seed)
    if "coverage" in only:
        rows += coverage_section(judge, held, args.window, reps, args.seed)
    if "parts" in only:
        rows += parts(args.quick, args.seed)
    print(table(rows))
    command = " ".join(argv if argv is not None else sys.argv[1:])
    print(f"\n{time.perf_counter() - started:.0f} s; python ci/bench_stats.py {command}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
