"""Slowdowns of several primitives at once: what the nightly gate does when a change slows every
row of k of the matrix's primitives by 25 %, for every k and every combination of k primitives.
Replays the shipped rule on the recorded launches (as ci/bench_confirm.py does): each held-out
night alone (no re-run), judged against fixed baseline windows.

    python ci/bench_several.py --held-out g11 --baselines g10      # docs/gate.md's table
    python ci/bench_several.py --held-out g10 --baselines g9       # the development group
    python ci/bench_several.py --held-out g10 --baselines g9 --no-box-rule
    python ci/bench_several.py --held-out g10 --baselines g9 --absolute
    python ci/bench_several.py --held-out g10 --baselines g9 --scenario "one world size (3)"
    python ci/bench_several.py --held-out g11 --baselines g10 --speedup   # k primitives 25 % faster
    python ci/bench_several.py --quick                             # one window, 6 nights, k <= 3

Prints a Markdown table, one line per k: the nights judged, and how they ended: exit 1 naming a
slowed primitive, exit 1 naming none of them (the whole run, or an unslowed primitive), exit 5
(the box changed), exit 0; the nights that passed while a slowed primitive's row or band
claimed a `detectable_change` of 25 % or less, read as if each primitive were judged on its own
level; and the claims as scoped (scoped_change): the nights where some hypothesis claimed a
`detectable_change` at most the change it is about (in relative mode a primitive's change
beyond the median of the others, the whole run's on its own), and of those the nights that
passed: misses that no printed line allows. A claim is made at 80 % power, so up to a fifth of
the nights whose claims sit right at the change may pass. docs/gate.md#several-primitives-at-once
reads it.
"""

from __future__ import annotations

import itertools
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its siblings, however it is loaded
from stats_gate import (
    SLOWDOWN,
    Gate,
    parse_replay,
    regressed,
    replay_nights,
    replay_parser,
    scenarios,
)

from distbench.stats.arrays import WHOLE_RUN
from distbench.stats.engine import Outcome, Settings
from distbench.stats.verdict import Judged

ENDINGS = ("slowed", "whole", "box", "passed", "own", "claimed", "scoped")
HEADER = (
    "| k slower | nights | exit 1 naming a slowed primitive | exit 1, no slowed primitive named "
    "| exit 5 (the box) | exit 0 | exit 0, a slowed primitive claiming <= 25 % on its own level "
    "| a claim covered the change | of those, exit 0 (silent) |"
)


def primitive_shifts(shift: np.ndarray, primitives: np.ndarray) -> dict[str, float]:
    """Each primitive's vote for the common level: its rows' mean injected log shift (as
    engine.common_levels votes, noise-free). Depends only on the slowed combination."""
    return {p: float(shift[primitives == p].mean()) for p in sorted(set(primitives.tolist()))}


def scoped_change(
    judged: Judged, shift: np.ndarray, votes: dict[str, float], relative: bool
) -> float:
    """The change (a share) that a hypothesis's `detectable_change` is a claim about, for the
    injected log shift of each row alone (no noise), as the engine scopes it: the whole run's,
    the median over the primitives of their rows' mean shift (`votes`, engine.common_levels); a
    primitive's in relative mode, its rows' mean shift beyond the median of the other
    primitives' (leave one out, as the engine does); in absolute mode, its rows' mean shift."""
    own = judged.hypothesis.primitive
    if own == WHOLE_RUN:
        return math.expm1(float(np.median(list(votes.values()))))
    change = float(shift[list(judged.hypothesis.members)].mean())
    others = [v for p, v in votes.items() if p != own]
    if relative and others:
        change -= float(np.median(others))
    return math.expm1(change)


def ending(
    outcome: Outcome, slowed: tuple[str, ...], shift: np.ndarray, votes: dict[str, float]
) -> tuple[str, bool, bool]:
    """How a night ended (ENDINGS[:4]: "whole" is any other regression, the whole run's or an
    unslowed primitive's); whether it held a claim, a hypothesis (the whole run's too) whose
    `detectable_change` was at most the change it is about, as the engine scopes it
    (scoped_change; none on a night the box changed: no claim is vouched for then); and, when it
    passed, whether a slowed primitive's row or band claimed 25 % or less with every row of it
    slower (`own`: each primitive's claim read as if it were on its own level)."""
    judged = (*outcome.rows, *outcome.bands)
    claimed = not outcome.box and any(
        j.detectable <= scoped_change(j, shift, votes, outcome.relative) for j in judged
    )
    if any(regressed(outcome, p) for p in slowed):
        return "slowed", claimed, False
    if regressed(outcome):
        return "whole", claimed, False
    if outcome.box:
        return "box", False, False
    shifted = shift > 0  # slower: a speedup is no slowdown that a claim missed
    own = any(
        j.hypothesis.primitive in slowed
        and bool(shifted[list(j.hypothesis.members)].all())
        and j.detectable <= SLOWDOWN - 1
        for j in judged
    )
    return "passed", claimed, own


def main(argv: list[str] | None = None) -> int:
    parser = replay_parser(__doc__, "g10", window=14, per_night=3)
    parser.set_defaults(baselines="g9")
    parser.add_argument("--absolute", action="store_true", help="each primitive on its own level")
    parser.add_argument(
        "--speedup", action="store_true",
        help="the k primitives 25 %% faster, not slower: an exit 1 then names an unchanged one",
    )  # fmt: skip
    parser.add_argument(
        "--scenario", default="every row of one primitive",
        help="which rows of each slowed primitive are slower (ci/stats_gate.py's scenarios)",
    )  # fmt: skip
    args = parse_replay(parser, argv)
    started = time.perf_counter()
    gate = Gate(settings=Settings(relative=False)) if args.absolute else Gate()
    judge, held, chosen = replay_nights(args, gate)
    every = scenarios(judge.keys)
    if args.scenario not in every:
        parser.error(f"--scenario {args.scenario!r}: one of {', '.join(map(repr, every))}")
    masks = dict(every[args.scenario])
    primitives = sorted(masks)
    held = held[:6] if args.quick else held
    print(f"held out: {args.held_out}; windows of {args.baselines}, {args.window} nights of "
          f"{args.per_night} launches; k of the {len(primitives)} primitives {SLOWDOWN - 1:.0%} "
          f"{'faster' if args.speedup else 'slower'} ({args.scenario}); box rule "
          f"{'off' if args.no_box_rule else 'the share alone' if args.share_only else 'on'}, "
          f"{'absolute' if args.absolute else 'relative'}\n")  # fmt: skip
    print(HEADER)
    print("| ---: " * 9 + "|")
    none = np.zeros(len(judge.keys), dtype=bool)
    for k in range(0, (3 if args.quick else len(primitives)) + 1):
        counts = dict.fromkeys(ENDINGS, 0)
        for _name, base in chosen:
            for night in (n for n in held if n not in base):
                for slowed in itertools.combinations(primitives, k):
                    shifted = np.any([masks[p] for p in slowed] or [none], axis=0)
                    sign = -1.0 if args.speedup else 1.0
                    shift = sign * np.log(SLOWDOWN) * shifted
                    votes = primitive_shifts(shift, judge.primitives)
                    outcome = judge.night(base, night, shift if k else None)
                    end, claimed, own = ending(outcome, slowed, shift, votes)
                    counts[end] += 1
                    counts["own"] += own
                    counts["claimed"] += claimed
                    counts["scoped"] += claimed and end == "passed"
        nights = sum(counts[e] for e in ENDINGS[:4])
        cells = [f"{counts[e]} ({counts[e] / max(nights, 1):.0%})" for e in ENDINGS[:-1]]
        cells.append(f"{counts['scoped']} ({counts['scoped'] / max(counts['claimed'], 1):.0%})")
        print(f"| {k} | {nights} | " + " | ".join(cells) + " |", flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
