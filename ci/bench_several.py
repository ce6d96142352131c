"""Slowdowns of several primitives at once: what the nightly gate does when a change slows every
row of k of the matrix's primitives by 25 %, for every k and every combination of k primitives.
Replays the shipped rule on the recorded launches (as ci/bench_confirm.py does): each held-out
night alone (no re-run), judged against fixed baseline windows.

    python ci/bench_several.py --held-out g10 --baselines g9       # docs/gate.md's table
    python ci/bench_several.py --held-out g10 --baselines g9 --no-box-rule
    python ci/bench_several.py --held-out g10 --baselines g9 --absolute
    python ci/bench_several.py --held-out g10 --baselines g9 --scenario "one world size (3)"
    python ci/bench_several.py --held-out g11 --baselines g10 --speedup   # k primitives 25 % faster
    python ci/bench_several.py --quick                             # one window, 6 nights, k <= 3

Prints a Markdown table, one line per k: the nights judged, and how they ended: exit 1 naming a
slowed primitive, exit 1 naming none of them (the whole run, or an unslowed primitive), exit 5
(the box changed), exit 0; and the nights that passed while a slowed primitive's row or band
claimed a `detectable_change` of 25 % or less (a miss its own line does not show).
docs/gate.md#several-primitives-at-once reads it.
"""

from __future__ import annotations

import itertools
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

from distbench.stats.engine import Outcome, Settings

ENDINGS = ("slowed", "whole", "box", "passed", "silent")
HEADER = (
    "| k slower | nights | exit 1 naming a slowed primitive | exit 1, no slowed primitive named "
    "| exit 5 (the box) | exit 0 | exit 0, a slowed primitive claiming <= 25 % |"
)


def ending(outcome: Outcome, slowed: tuple[str, ...], shifted: np.ndarray) -> tuple[str, bool]:
    """How a night ended (ENDINGS[:4]: "whole" is any other regression, the whole run's or an
    unslowed primitive's) and, when it passed, whether a row or band of a slowed primitive, every
    row of it slower (`shifted`), claimed it would catch 25 % (a miss its own line does not
    show)."""
    if any(regressed(outcome, p) for p in slowed):
        return "slowed", False
    if regressed(outcome):
        return "whole", False
    if outcome.box:
        return "box", False
    claims = any(
        j.hypothesis.primitive in slowed
        and bool(shifted[list(j.hypothesis.members)].all())
        and j.detectable <= SLOWDOWN - 1
        for j in (*outcome.rows, *outcome.bands)
    )
    return "passed", claims


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
    print("| ---: " * 7 + "|")
    for k in range(0, (3 if args.quick else len(primitives)) + 1):
        counts = dict.fromkeys(ENDINGS, 0)
        for _name, base in chosen:
            for night in (n for n in held if n not in base):
                for slowed in itertools.combinations(primitives, k):
                    shifted = np.any([masks[p] for p in slowed], axis=0)
                    sign = -1.0 if args.speedup else 1.0
                    shift = sign * np.log(SLOWDOWN) * shifted if k else None
                    end, silent = ending(judge.night(base, night, shift), slowed, shifted)
                    counts[end] += 1
                    counts["silent"] += silent
        nights = sum(counts[e] for e in ENDINGS[:4])
        cells = [f"{counts[e]} ({counts[e] / max(nights, 1):.0%})" for e in ENDINGS]
        print(f"| {k} | {nights} | " + " | ".join(cells) + " |", flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
