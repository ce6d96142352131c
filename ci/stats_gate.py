"""The nightly gate replayed on recorded launches (ci/bench_stats.py): false alarms on unchanged
nights against fixed baselines, catches of 25 % slowdowns (every row of a primitive, one size
band, one world size, one dtype), whether detectable_change is calibrated, and the coverage of
compare's 95 % intervals under named added noise.

Every night is judged by distbench.stats.engine.judge_matrices, the function compare calls, with
the shipped gate's settings (`Gate`): nothing here re-implements the rule.
"""

from __future__ import annotations

import argparse
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from stats_blocks import block_interval, clopper_pearson
from stats_data import Values, launch_values, load_fixture, nights_of, side

from distbench.stats import box
from distbench.stats.defaults import default_prior
from distbench.stats.engine import WHOLE_RUN, Outcome, Settings, judge_matrices, size_band
from distbench.stats.family import primitive_of
from distbench.stats.verdict import REGRESSED

SLOWDOWN = 1.25


@dataclass(frozen=True)
class Gate:
    """The rule replayed: the shipped nightly's (ci/nightly.sh) unless a variant is tuned."""

    metric: str = "time_us_min"
    floor: float = 0.05
    settings: Settings = field(default_factory=Settings)


@dataclass
class Judge:
    """Judges nights of one recording with one gate (defaults and floors precomputed)."""

    values: Values
    keys: list[dict[str, str]]
    gate: Gate

    def __post_init__(self) -> None:
        within = np.nanmean(self.values.within, axis=0)
        self.defaults = [
            default_prior(self.gate.metric, size_band(k), float(w))
            for k, w in zip(self.keys, within, strict=True)
        ]
        self.fallback = default_prior(self.gate.metric, "mid", math.nan)
        self.floors = [self.gate.floor] * len(self.keys)
        self.primitives = np.array([primitive_of(k) for k in self.keys])

    def night(
        self, base: Sequence[Sequence[int]], current: Sequence[int],
        shift: np.ndarray | None = None, base_y: np.ndarray | None = None,
    ) -> Outcome:  # fmt: skip
        """One night judged: `shift` (launches x rows or rows, log) added to the current side."""
        y = self.values.y[list(current)].copy()
        if shift is not None:
            y += shift
        return judge_matrices(
            self.keys, side(self.values, base, base_y), side(self.values, [current], y),
            self.floors, self.sides_defaults(base, current), self.gate.settings, self.fallback,
        )  # fmt: skip

    def sides_defaults(self, base: Sequence[Sequence[int]], current: Sequence[int]) -> list:
        """Each row's default prior from the within-launch variance of the judged launches
        alone, as compare builds it (reports/compare/judge.py), not from every recorded launch
        (`self.defaults`, kept for callers that judge no night)."""
        launches = [i for night in base for i in night] + list(current)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a row no launch measured
            within = np.nanmean(self.values.within[launches], axis=0)
        return [
            default_prior(self.gate.metric, size_band(k), float(w))
            for k, w in zip(self.keys, within, strict=True)
        ]


def regressed(outcome: Outcome, primitive: str | None = None) -> bool:
    """Any regressed hypothesis (of `primitive`, when given; the whole run never names one)."""
    return any(
        j.state == REGRESSED and (primitive is None or j.hypothesis.primitive == primitive)
        for j in (*outcome.rows, *outcome.bands)
    )


def scenarios(keys: list[dict[str, str]]) -> dict[str, list[tuple[str, np.ndarray]]]:
    """The slowdowns users get, each per primitive: (primitive, rows mask)."""
    primitives = sorted({primitive_of(k) for k in keys})
    prim = np.array([primitive_of(k) for k in keys])
    size = np.array([int(k.get("size_bytes") or 0) for k in keys])
    world = np.array([k.get("world_size", "") for k in keys])
    dtype = np.array([k.get("dtype", "") for k in keys])
    largest = {p: size[prim == p].max() for p in primitives}
    out: dict[str, list[tuple[str, np.ndarray]]] = {
        "every row of one primitive": [], "one size band (its largest size)": [],
        "one world size (3)": [], "one dtype (float32)": [],
    }  # fmt: skip
    for p in primitives:
        own = prim == p
        out["every row of one primitive"].append((p, own))
        out["one size band (its largest size)"].append((p, own & (size == largest[p])))
        out["one world size (3)"].append((p, own & (world == "3")))
        out["one dtype (float32)"].append((p, own & (dtype == "float32")))
    return out


@dataclass
class Rate:
    name: str
    hits: int
    n: int
    target: str = ""
    ok: bool | None = None
    note: str = ""
    outcomes: np.ndarray | None = None
    """windows x nights (x outcomes a night), nan where not judged: for the block interval."""

    @property
    def value(self) -> float:
        return self.hits / self.n if self.n else math.nan

    def row(self) -> dict[str, object]:
        low, high = clopper_pearson(self.hits, self.n) if self.n else (math.nan, math.nan)
        blocks = ""
        if self.outcomes is not None and self.n:
            b_low, b_high, n_eff = block_interval(self.outcomes)
            blocks = f"[{b_low:.1%}, {b_high:.1%}] of {n_eff:.0f}"
        return {
            "name": self.name, "value": f"{self.value:.1%} ({self.hits}/{self.n})",
            "interval": f"[{low:.1%}, {high:.1%}]", "blocks": blocks, "target": self.target,
            "ok": "" if self.ok is None else ("yes" if self.ok else "NO"), "note": self.note,
        }  # fmt: skip


Nights = dict[str, list[list[int]]]
Seen = dict[str, list[tuple[bool, list[float]]]]
"""Per partial scenario: (caught, the affected rows' detectable_change) per night."""


def fixed_baselines(nights: Nights, window: int) -> list[tuple[str, list[list[int]]]]:
    """Disjoint fixed baselines of `window` nights in each group, each spread over the group's
    hours (every s-th night, s = nights // window), as a window's nights are days apart in use
    while a recording's nights are minutes apart: (name, nights)."""
    found = []
    for group, members in nights.items():
        step = len(members) // window
        for offset in range(step):
            chosen = members[offset::step][:window]
            found.append((f"{group} nights {offset + 1}::{step}", chosen))
    return found


def replay_fixed(
    judge: Judge, nights: dict[str, list[list[int]]], window: int,
    progress: Callable[[str], None] = lambda _s: None, baselines: Nights | None = None,
) -> tuple[list[Rate], list[Rate], Seen, np.ndarray]:  # fmt: skip
    """A/A per fixed baseline, and A/B catches per scenario, over every held-out night (`nights`)
    outside the baseline; for the partial scenarios the affected rows' detectable_change of each
    night (from its A/A judgement) beside whether it was caught; and the A/A outcome grid
    (windows x held-out nights). The baselines are windows of `baselines`' groups (default: the
    held-out ones), as a user's baseline is recorded before the nights it judges."""
    every = [n for members in nights.values() for n in members]
    aa_rates: list[Rate] = []
    seen: Seen = {}
    kinds = scenarios(judge.keys)
    windows = fixed_baselines(baselines or nights, window)
    aa = np.full((len(windows), len(every)), np.nan)  # the outcome grids, for block_interval
    ab = {kind: np.full((*aa.shape, len(cases)), np.nan) for kind, cases in kinds.items()}
    for w, (name, base) in enumerate(windows):
        for n, night in enumerate(every):
            if night in base:
                continue
            null = judge.night(base, night)
            aa[w, n] = regressed(null)
            detectable = np.array([j.detectable for j in null.rows])
            for kind, cases in kinds.items():
                for c, (primitive, mask) in enumerate(cases):
                    caught = regressed(judge.night(base, night, np.log(SLOWDOWN) * mask), primitive)
                    ab[kind][w, n, c] = caught
                    seen.setdefault(kind, []).append((caught, detectable[mask].tolist()))
        aa_rates.append(rate_of(f"A/A, baseline {name}", aa[w : w + 1], "<= 5 %"))
        progress(f"baseline {name}: {aa_rates[-1].hits}/{aa_rates[-1].n} unchanged nights failed")
    ab_rates = [rate_of(f"A/B 25 %: {kind}", grid) for kind, grid in ab.items()]
    return aa_rates, ab_rates, seen, aa


def rate_of(name: str, outcomes: np.ndarray, target: str = "") -> Rate:
    """A rate over an outcome grid (windows x nights ..., nan: not judged), which it keeps for
    its block interval."""
    judged = outcomes[~np.isnan(outcomes)]
    return Rate(name, int(judged.sum()), int(judged.size), target, outcomes=outcomes)


def whole_run_excluded(outcome: Outcome) -> list:
    return [j for j in (*outcome.rows, *outcome.bands) if j.hypothesis.primitive != WHOLE_RUN]


FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "data" / "launches-nightly-cpu.json.gz"


def replay_parser(
    doc: str | None, held_out: str, window: int, per_night: int
) -> argparse.ArgumentParser:
    """The options of a replay of held-out nights against fixed baseline windows
    (ci/bench_confirm.py, ci/bench_several.py), with the script's defaults; --no-box-rule too."""
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    parser.add_argument("--held-out", default=held_out, help="the group whose nights are judged")
    parser.add_argument("--baselines", default=held_out, help="the group the windows come from")
    parser.add_argument("--window", type=int, default=window, help="nights a baseline window holds")
    parser.add_argument("--per-night", type=int, default=per_night, help="launches a night")
    parser.add_argument("--quick", action="store_true", help="the first window only (a smoke)")
    parser.add_argument(
        "--no-box-rule", action="store_true", help="the rule before g10: never the box, to compare"
    )
    parser.add_argument(
        "--share-only", action="store_true",
        help="the box rule as held out on g10: the share of the primitives named alone",
    )  # fmt: skip
    return parser


def parse_replay(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """`parser`'s arguments (replay_parser's and the script's own), --no-box-rule applied: no
    share of the primitives is more than all of them, so the box rule never fires."""
    args = parser.parse_args(argv)
    if args.no_box_rule:
        box.BOX_SHARE = 1.0
    if args.share_only:
        box.TWO_SIDED = False
    return args


def replay_nights(
    args: argparse.Namespace, gate: Gate
) -> tuple[Judge, list[list[int]], list[tuple[str, list[list[int]]]]]:
    """What a replay (replay_parser's `args`) judges: the recorded launches under `gate`, the
    held-out group's nights, and the fixed baseline windows of --baselines (--quick: the first)."""
    recorded = load_fixture(args.fixture)
    values = launch_values(recorded, gate.metric)
    held = nights_of(values, args.held_out, args.per_night)
    windows = nights_of(values, args.baselines, args.per_night)
    chosen = fixed_baselines({args.baselines: windows}, args.window)
    return Judge(values, recorded.keys, gate), held, chosen[:1] if args.quick else chosen
