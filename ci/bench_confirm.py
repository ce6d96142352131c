"""A failed night confirmed by the next one: how often would the nightly gate fail if a night
only counted as regressed when the night after it regressed too? Replays the shipped rule on the
recorded launches (as ci/bench_stats.py does), judging each held-out night against fixed
baseline windows, then pairs each judged night with the next judged one. A benchmark of a
policy a user can adopt (re-run or wait for the next night before blaming a commit), not a rule
distbench applies.

    python ci/bench_confirm.py --held-out g5 --baselines g5   # g5's own windows (docs/gate.md)
    python ci/bench_confirm.py --held-out g5 --baselines g4   # windows two hours older
    python ci/bench_confirm.py --quick                        # one window (tests/integration)

Prints, alone and confirmed: the A/A rate (unchanged nights called regressed) and the catch rate
of a 25 % slowdown of every row of one primitive (both nights slowed), with Clopper-Pearson
intervals. Those count nights as independent, which they are not quite: the nights judged against
one window share it, and consecutive pairs share a night, so the intervals are too narrow by an
amount not measured.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its siblings, however it is loaded
from stats_data import launch_values, load_fixture, nights_of
from stats_gate import SLOWDOWN, Gate, Judge, Rate, fixed_baselines, regressed, scenarios

EVERY_ROW = "every row of one primitive"
FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "data" / "launches-nightly-cpu.json.gz"


def tally(alone: Rate, confirmed: Rate, nights: list[list[bool]]) -> None:
    """Add one window's judged nights (each a list of outcomes: one per scenario) to the rates:
    every outcome alone, and each outcome with the same one of the next judged night."""
    alone.hits += sum(map(sum, nights))
    alone.n += sum(map(len, nights))
    for tonight, tomorrow in itertools.pairwise(nights):
        confirmed.hits += sum(a and b for a, b in zip(tonight, tomorrow, strict=True))
        confirmed.n += len(tonight)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    parser.add_argument("--held-out", default="g5", help="the group whose nights are judged")
    parser.add_argument("--baselines", default="g5", help="the group the windows come from")
    parser.add_argument("--window", type=int, default=8, help="nights a baseline window holds")
    parser.add_argument("--per-night", type=int, default=2, help="launches a night")
    parser.add_argument("--quick", action="store_true", help="the first window only (a smoke)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    recorded = load_fixture(args.fixture)
    values = launch_values(recorded, Gate.metric)
    judge = Judge(values, recorded.keys, Gate())
    held = nights_of(values, args.held_out, args.per_night)
    windows = nights_of(values, args.baselines, args.per_night)
    slow = [(p, np.log(SLOWDOWN) * mask) for p, mask in scenarios(judge.keys)[EVERY_ROW]]
    aa, aa_confirmed = Rate("A/A, a night alone", 0, 0), Rate("A/A, confirmed by the next", 0, 0)
    catch = Rate("catch, a night alone", 0, 0)
    catch_confirmed = Rate("catch, confirmed by the next", 0, 0)
    chosen = fixed_baselines({args.baselines: windows}, args.window)
    for name, base in chosen[:1] if args.quick else chosen:
        judged = [night for night in held if night not in base]
        fails = [regressed(judge.night(base, night)) for night in judged]
        caught = [[regressed(judge.night(base, night, s), p) for p, s in slow] for night in judged]
        tally(aa, aa_confirmed, [[fail] for fail in fails])
        tally(catch, catch_confirmed, caught)
        print(f"{name}: {sum(fails)} of {len(fails)} unchanged nights regressed", file=sys.stderr)
    print(f"held out: {args.held_out}; windows of {args.baselines}, {args.window} nights of "
          f"{args.per_night} launches; 25 % slowdowns of every row of one primitive")  # fmt: skip
    for rate in (aa, catch, aa_confirmed, catch_confirmed):
        row = rate.row()
        print(f"{row['name']}: {row['value']} {row['interval']}")
    print(f"{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
