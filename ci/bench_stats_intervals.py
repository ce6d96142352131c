"""Coverage of the intervals a row and a fit print as "95 %", by resampling recorded launches
(#25 items 8 and 9; ci/bench_stats.py imports `run`, docs/measurement.md keeps the table).

    python ci/bench_stats_intervals.py            # >= 1,000 replications per figure
    python ci/bench_stats_intervals.py --quick    # a few figures, fewer replications (< 20 s)

Recorded data, never the model under test: tests/data/interval-trials.json (real gloo launches of
this box: latency mode, 30 trials of 20 ops at 1K, 64K, 1M, x4; the default ladder 1K-64M in
throughput mode, 10 trials, x6) and tests/data/gate-launches.json (13 launches of the nightly
matrix, 12 trials per row). Named noise is added on top:

- the p50's interval (latency: trials of ops; throughput: one sample a trial): a row's trials
  are drawn with replacement from one recorded row (latency) or from the row's trials of every
  launch, each over its launch's median (throughput), times a shift per trial: none, heavy-tailed
  (5 % x Student t3), or AR(1) drift between consecutive trials (phi 0.5, 5 %). The truth is the
  median of the population drawn from (every op of every trial x every shift), found from
  TRUTH_TRIALS draws.
- sequential against interleaved trials (tests/data/interval-trials-order.json.gz: pairs of
  latency launches recorded one after the other, `--order sequential` and `--order interleaved`,
  on the quiet box and beside one or two processes bursting busy and idle): the same interval in
  the recorded order of each row's trials (runs of ~5), which keeps the box's drift from trial
  to trial. Interleaved, a row's consecutive trials are a round apart, and the drift between
  them is weaker (order_rows). And sequential against grouped (the default in latency mode since
  it was measured so: tests/data/interval-trials-grouped.json.gz, 6 sizes in two groups of 3,
  recorded by ci/record_order_pairs.py after the choice), and the same recorded again after a
  latency row's interval was given a 6-trial minimum (stats/intervals.py MIN_CLUSTER_TRIALS,
  chosen on the grouped recordings: tests/data/interval-trials-heldout.json.gz, held out). Rows
  of 5 trials get no interval (a row says so); the order rows run from 6.
- --precision P: trials are added one at a time from --trials 5 up to --max-trials 50 until
  stats/stopping.py's `converged`, the rule comm/precision.py runs, says converged (latency: the
  95 % confidence sequence within +-P; one sample a trial: the 99 % interval within +-P at 3
  consecutive looks, one every 2 trials from the 10th). Two figures: the share of rows declared
  converged whose p50 misses the truth by more than P (a converged row promises +-P at 95 %), and
  the share of every row whose printed 95 % interval, where the rule stopped it, held the truth
  (at least 92 %: after a stop chosen by looking, an interval valid at any stop holds more than
  its level at most stops). On the recorded latency and throughput launches, with the noises
  above, and on the sequential latency launches of 2026-12-05 in their recorded order.
- the fit: each size's p50 from a random launch's resampled trials over the sizes' median across
  launches (their real scatter), on the model's curve through those medians, so that alpha and beta
  have a true value; a quiet box's scatter is the same in log terms x 1/4. The printed intervals
  are those of fits the report shows (rel_rms <= 25 %: not "no fit (noise)"), drawn until as many
  are shown as the figure's replications (FIT_DRAWS).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from distbench.stats import Stats, stopping
from distbench.stats.fit import fit_latency_bandwidth
from distbench.stats.intervals import MIN_CLUSTER_TRIALS, trial_interval

ROOT = Path(__file__).resolve().parent.parent
TRIALS_FIXTURE = ROOT / "tests" / "data" / "interval-trials.json"
GATE_FIXTURE = ROOT / "tests" / "data" / "gate-launches.json"
ORDER_FIXTURE = ROOT / "tests" / "data" / "interval-trials-order.json.gz"
GROUPED_FIXTURE = ROOT / "tests" / "data" / "interval-trials-grouped.json.gz"
HELD_OUT_FIXTURE = ROOT / "tests" / "data" / "interval-trials-heldout.json.gz"
ORDER_FIXTURES = {
    ORDER_FIXTURE: "recorded (2026-12-05)",
    GROUPED_FIXTURE: "6 sizes recorded after grouped became the default (2026-12-05)",
    HELD_OUT_FIXTURE: "6 sizes recorded after the 6-trial minimum was chosen (2026-12-05)",
}
"""The order rows' recordings and how their notes name them."""
RECORDED_ORDER = "recorded order (runs of ~5 consecutive trials)"
TRUTH_TRIALS = 4000
"""Trials drawn (with their shifts) to find a population's median."""
PRECISION = 0.10
MAX_TRIALS = 50
Shift = Callable[[np.random.Generator, int], np.ndarray]


def ar1(rng: np.random.Generator, count: int, phi: float = 0.5, sd: float = 0.05) -> np.ndarray:
    """count consecutive log shifts of an AR(1) with stationary standard deviation sd."""
    shifts = np.empty(count)
    shifts[0] = rng.normal(0, sd)
    for i in range(1, count):
        shifts[i] = phi * shifts[i - 1] + rng.normal(0, sd * math.sqrt(1 - phi * phi))
    return shifts


def no_shift(rng: np.random.Generator, count: int) -> np.ndarray:
    return np.zeros(count)


NOISES: dict[str, Shift] = {
    "recorded trials": no_shift,
    "+ heavy-tailed trial shifts (t3, 5 %)": lambda rng, count: 0.05 * rng.standard_t(3, count),
    "+ AR(1) drift between trials (phi 0.5, 5 %)": ar1,
    RECORDED_ORDER: no_shift,
}
BLOCKS = {RECORDED_ORDER: 5.0}
"""Noises that draw runs of consecutive recorded trials (a stationary bootstrap, mean run
length 5), keeping how the box drifted from trial to trial (lag-1 correlation of trial medians
about 0.5 in the latency launches); the others draw trials one by one."""


def row(name: str, hits: int, n: int, target: str, ok: bool, note: str) -> dict[str, object]:
    value = hits / n if n else math.nan
    error = math.sqrt(value * (1 - value) / n) if n else math.nan
    return {
        "name": name, "value": round(value, 4), "mc_error": round(error, 4), "target": target,
        "ok": ok, "interval": f"+-{error:.1%} (MC)", "note": note,
    }  # fmt: skip


def coverage_row(name: str, hits: int, n: int, note: str) -> dict[str, object]:
    ok = n > 0 and abs(hits / n - 0.95) <= 0.03
    return row(name, hits, n, "95 % +- 3", ok, note)


def truth_of(pool: list[np.ndarray], shift: Shift, rng: np.random.Generator) -> float:
    """The median of every op of trials drawn from `pool`, each times its shift's marginal."""
    picks = rng.integers(len(pool), size=TRUTH_TRIALS)
    factors = np.exp(shift(rng, TRUTH_TRIALS))
    if shift is ar1:  # its marginal, not one long correlated path
        factors = np.exp(rng.normal(0, 0.05, TRUTH_TRIALS))
    return float(
        np.median(np.concatenate([pool[i] * f for i, f in zip(picks, factors, strict=True)]))
    )


def draw(
    pool: list[np.ndarray], shift: Shift, rng: np.random.Generator, count: int, run: float = 1.0
) -> list[float]:
    """`count` trials, trial-major, drawn with replacement, each times its shift; in runs of
    consecutive trials of mean length `run` (1: one by one)."""
    factors = np.exp(shift(rng, count))
    picks = [int(rng.integers(len(pool)))]
    while len(picks) < count:
        step = rng.random() >= 1 / run
        picks.append((picks[-1] + 1) % len(pool) if step else int(rng.integers(len(pool))))
    return np.concatenate([pool[i] * f for i, f in zip(picks, factors, strict=True)]).tolist()


def latency_pools() -> list[list[np.ndarray]]:
    data = json.loads(TRIALS_FIXTURE.read_text())
    return [[np.array(t) for t in entry["trials"]] for entry in data["latency"]]


def throughput_pools() -> list[list[np.ndarray]]:
    """Per gate row: every launch's trials over that launch's median (one sample a trial)."""
    data = json.loads(GATE_FIXTURE.read_text())
    pools = []
    for index in range(len(data["cases"])):
        trials = [launch[index] for launch in data["launches"].values() if launch[index]]
        pools.append([np.array([v / np.median(t)]) for t in trials for v in t])
    return pools


def held(
    pools: list[list[np.ndarray]], truths: list[float], shift: Shift, run: float, count: int,
    reps: int, rng: np.random.Generator,
) -> tuple[int, int]:  # fmt: skip
    """(held, with an interval): `reps` rows of `count` trials, each drawn from a random pool
    (draw: in runs of mean length `run`), whose p50 interval holds that pool's truth."""
    hits = n = 0
    for _ in range(reps):
        which = int(rng.integers(len(pools)))
        low, high = trial_interval(draw(pools[which], shift, rng, count, run), count)
        if not math.isnan(low):
            n += 1
            hits += low <= truths[which] <= high
    return hits, n


def interval_coverage(
    kind: str, pools: list[list[np.ndarray]], counts: list[int], reps: int, rng: np.random.Generator
) -> list[dict[str, object]]:
    rows = []
    for noise, shift in NOISES.items():
        truths = [truth_of(pool, shift, rng) for pool in pools]
        for count in counts:
            hits, n = held(pools, truths, shift, BLOCKS.get(noise, 1.0), count, reps, rng)
            note = f"{reps} rows, {n / reps:.0%} with an interval"
            rows.append(
                coverage_row(f"{kind} p50 interval, {count} trials, {noise}", hits, n, note)
            )
    return rows


def few_trials_row(
    pools: list[list[np.ndarray]], reps: int, rng: np.random.Generator
) -> dict[str, object]:
    """Latency rows of MIN_CLUSTER_TRIALS - 1 trials given an interval: none (5 trials of ops,
    resampled, gave one to 52-77 % of rows, which then held 83-95 %)."""
    count = MIN_CLUSTER_TRIALS - 1
    given = sum(
        not math.isnan(trial_interval(draw(pools[int(rng.integers(len(pools)))], no_shift, rng,
                                           count), count)[0])
        for _ in range(reps)
    )  # fmt: skip
    name = f"latency rows of {count} trials given an interval (MIN_CLUSTER_TRIALS)"
    return row(name, given, reps, "0", given == 0, f"{reps} rows")


def order_pools(fixture: Path = ORDER_FIXTURE) -> dict[tuple[str, str], list[list[np.ndarray]]]:
    """The pairs' rows (each a launch's size: its trials of ops) by (load, order)."""
    with gzip.open(fixture, "rt") as source:
        entries = json.load(source)["latency"]
    pools: dict[tuple[str, str], list[list[np.ndarray]]] = {}
    for entry in entries:
        trials = [np.array(t) for t in entry["trials"]]
        pools.setdefault((entry["load"], entry["order"]), []).append(trials)
    return pools


def order_rows(reps: int, counts: list[int], rng: np.random.Generator) -> list[dict[str, object]]:
    """The latency p50 interval in the recorded order of each row's trials (runs of ~5), rows of
    sequential launches against rows of the interleaved launch recorded beside each, per load
    (module docstring)."""
    rows = []
    for fixture, recorded in ORDER_FIXTURES.items():
        for (load, order), pools in order_pools(fixture).items():
            truths = [truth_of(pool, no_shift, rng) for pool in pools]
            for count in counts:
                hits, n = held(pools, truths, no_shift, BLOCKS[RECORDED_ORDER], count, reps, rng)
                name = f"latency p50 interval, {count} trials, {RECORDED_ORDER}, --order {order}"
                name += f", {load}"
                note = f"{reps} rows of {len(pools)} {recorded}, "
                note += f"{n / reps:.0%} with an interval"
                rows.append(coverage_row(name, hits, n, note))
    return rows


def precision_rows(
    kind: str, pools: list[list[np.ndarray]], reps: int, rng: np.random.Generator,
    noises: list[str],
) -> list[dict[str, object]]:  # fmt: skip
    """--precision PRECISION on rows drawn from `pools` under each noise, decided by the product's
    own rule (stopping.converged) and printing the product's own interval: two rows a noise, the
    converged rows off the truth by more than PRECISION, and the rows whose printed 95 % interval
    held the truth (every row, converged or not: each stopped where the rule chose)."""
    rows = []
    for noise in noises:
        shift = NOISES[noise]
        truths = [truth_of(pool, shift, rng) for pool in pools]
        converged = missed = held = held_converged = 0
        used = []  # trials each converged row took
        for _ in range(reps):
            which = int(rng.integers(len(pools)))
            truth = truths[which]
            samples = draw(pools[which], shift, rng, MAX_TRIALS, BLOCKS.get(noise, 1.0))
            per = len(samples) // MAX_TRIALS
            widths: list[float] = []  # the one-sample rule's half-widths, as decide() keeps them
            for count in range(5, MAX_TRIALS + 1):
                stats = Stats(tuple(samples[: count * per]), count, looked=True)
                if reached := stopping.converged(stats, widths, PRECISION):
                    break
            low, high = stats.p50_ci()  # the row's printed 95 % interval where it stopped
            inside = bool(low <= truth <= high)
            held += inside
            if reached:
                converged += 1
                used.append(count)
                missed += abs(stats.p50 - truth) > PRECISION * truth
                held_converged += inside
        name = f"--precision {PRECISION:.0%} ({kind}): "
        median = f"{np.median(used):.0f}" if used else "-"
        note = f"{converged} of {reps} converged (median {median} trials)"
        rows.append(row(name + f"converged, off the truth by more, {noise}", missed, converged,
                        "<= 5 %", missed <= 0.05 * converged, note))  # fmt: skip
        rows.append(row(name + f"every row's printed 95 % interval held the truth, {noise}",
                        held, reps, ">= 92 %", held >= 0.92 * reps,
                        note + f"; the converged rows' held it in {held_converged}"))  # fmt: skip
    return rows


def order_precision_rows(reps: int, rng: np.random.Generator) -> list[dict[str, object]]:
    """precision_rows on the latency launches of 2026-12-05 (order_pools) in their recorded
    order: the sequential ones, and the grouped ones (--precision's grouped window,
    comm/window.py, gives a row's trials that order); held out from every choice of the rule."""
    rows = []
    for fixture, recorded in ORDER_FIXTURES.items():
        for (load, order), pools in order_pools(fixture).items():
            if order in ("sequential", "grouped"):  # --precision refuses interleaved
                kind = f"latency, {order}, {load}, {recorded}"
                rows += precision_rows(kind, pools, reps, rng, [RECORDED_ORDER])
    return rows


LADDERS = {"9 sizes 1K-64M": list(range(9))}
"""Which of the recorded ladder's sizes a simulated fit uses: the default gloo ladder, three sizes
behind each end (df 1 each); fewer sizes get no interval."""
SCATTER = {"quiet box (recorded scatter x 1/4 in logs)": 0.25, "this box (recorded scatter)": 1.0}
FIT_DRAWS = 10
"""A fit figure draws until `reps` fits are shown, at most this many times `reps`: with this box's
scatter about 1 fit in 6 is "no fit (noise)"-free, and 2,000 draws showed 333 fits, whose
coverage then had a Monte Carlo error of +-1.7 points (89.5 % at seed 0; 92.5, 94.6 and 93.9 %
at seeds 0-2 of fit_rows alone), too coarse to tell 92 % from 95 %."""


def fit_rows(reps: int, rng: np.random.Generator, quick: bool) -> list[dict[str, object]]:
    data = json.loads(TRIALS_FIXTURE.read_text())["ladder"]
    all_sizes = np.array(data[0]["sizes"], dtype=float)
    p50s = np.array([[np.median(t) for t in launch["trials"]] for launch in data])  # launch x size
    all_centres = np.median(p50s, axis=0)
    rows = []
    for ladder, kept in LADDERS.items():
        sizes, centre = all_sizes[kept], all_centres[kept]
        model = fit_latency_bandwidth(sizes, centre)
        truth_curve = model.alpha_us + sizes / (model.beta_GBps * 1e3)
        for scene, scale in list(SCATTER.items())[: 1 if quick else 2]:
            alpha_hits = beta_hits = shown = drawn = every = 0
            while shown < reps and drawn < FIT_DRAWS * reps:  # `reps` fits shown, not drawn
                drawn += 1
                ratios = []
                for j in kept:
                    trials = data[int(rng.integers(len(data)))]["trials"][j]
                    ratios.append(np.median(rng.choice(trials, len(trials))) / all_centres[j])
                fit = fit_latency_bandwidth(sizes, truth_curve * np.exp(scale * np.log(ratios)))
                held = fit.alpha_interval[0] <= model.alpha_us <= fit.alpha_interval[1]
                every += held  # shown or not: does the rel_rms bar pick small residuals?
                if fit.noise or math.isnan(fit.alpha_interval[0]):
                    continue
                shown += 1
                alpha_hits += held
                beta_hits += fit.beta_interval[0] <= model.beta_GBps <= fit.beta_interval[1]
            note = (
                f"{shown} of {drawn} fits shown (the rest: no fit (noise)); alpha's interval held"
                f" in {every / drawn:.1%} of every fit drawn"
            )
            for what, hits in (("alpha", alpha_hits), ("beta", beta_hits)):
                name = f"fit {what} interval, {ladder}, {scene}"
                rows.append(coverage_row(name, hits, shown, note))
    given = [
        n
        for n in range(2, 9)
        if not math.isnan(fit_latency_bandwidth(all_sizes[:n], all_centres[:n]).alpha_interval[0])
    ]
    rows.append(row("fits of 2 to 8 sizes given an interval", len(given), 7, "0", not given, ""))
    return rows


def run(quick: bool, seed: int) -> list[dict[str, object]]:
    """Every figure of this module as rows (name, value, mc_error, target, ok, interval, note)."""
    rng = np.random.default_rng(seed)
    reps = 150 if quick else 2000
    latency, throughput = latency_pools(), throughput_pools()
    counts = [12] if quick else [6, 12, 30]
    rows = [few_trials_row(latency, reps, rng)]
    rows += interval_coverage("latency", latency, counts, reps, rng)
    rows += order_rows(reps, [12] if quick else [6, 12, 30], np.random.default_rng([seed, 16]))
    rows += interval_coverage("throughput", throughput, [12] if quick else [6, 12], reps, rng)
    noises = list(NOISES)[:1] if quick else list(NOISES)
    rows += precision_rows("latency", latency, 60 if quick else 1000, rng, noises)
    rows += precision_rows("throughput", throughput, 60 if quick else 1000, rng, noises)
    rows += order_precision_rows(60 if quick else 1000, np.random.default_rng([seed, 17]))
    rows += fit_rows(200 if quick else 2000, rng, quick)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = run(args.quick, args.seed)
    header = ["name", "value", "mc_error", "target", "ok", "note"]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for r in rows:
        cells = [f"{r['value']:.1%}", f"+-{r['mc_error']:.1%}"]
        print(
            f"| {r['name']} | "
            + " | ".join([*cells, str(r["target"]), "yes" if r["ok"] else "NO", str(r["note"])])
            + " |"
        )
    command = " ".join(argv if argv is not None else sys.argv[1:])
    print(f"\n{time.perf_counter() - started:.0f} s; python ci/bench_stats_intervals.py {command}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
