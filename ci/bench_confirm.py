"""A failed night confirmed by the next one: how often would the nightly gate fail if a night
only counted as regressed when the night after it regressed too? Replays the shipped rule on the
recorded launches (as ci/bench_stats.py does), judging each held-out night against fixed
baseline windows, then pairs each judged night with the next judged one. A recording's nights
follow each other within a minute or two, so this is the policy of `ci/nightly.sh --confirm`: a
regressed night swept again at once and failed only when the re-run regresses too.

    python ci/bench_confirm.py --held-out g5 --baselines g5   # g5's own windows (docs/gate.md)
    python ci/bench_confirm.py --held-out g5 --baselines g4   # windows two hours older
    python ci/bench_confirm.py --quick                        # one window (tests/integration)

Prints, alone and confirmed: the A/A rate (unchanged nights called regressed) and the catch rate
of a 25 % slowdown of every row of one primitive (both nights slowed), each with two intervals:
Clopper-Pearson, which counts nights as independent, and the block interval of
ci/stats_blocks.py (windows and runs of consecutive nights resampled), which lets the nights of
one window, and the nights of one episode, move together.
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
from stats_gate import SLOWDOWN, Gate, Judge, fixed_baselines, rate_of, regressed, scenarios

EVERY_ROW = "every row of one primitive"
FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "data" / "launches-nightly-cpu.json.gz"


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
    chosen = fixed_baselines({args.baselines: windows}, args.window)
    chosen = chosen[:1] if args.quick else chosen
    aa = np.full((len(chosen), len(held)), np.nan)  # windows x held-out nights, nan: not judged
    catch = np.full((*aa.shape, len(slow)), np.nan)
    aa_confirmed, catch_confirmed = aa.copy(), catch.copy()  # at a night: it and the next judged
    for w, (name, base) in enumerate(chosen):
        judged = [i for i, night in enumerate(held) if night not in base]
        for i in judged:
            aa[w, i] = regressed(judge.night(base, held[i]))
            catch[w, i] = [regressed(judge.night(base, held[i], s), p) for p, s in slow]
        for i, j in itertools.pairwise(judged):
            aa_confirmed[w, i] = aa[w, i] * aa[w, j]
            catch_confirmed[w, i] = catch[w, i] * catch[w, j]
        print(f"{name}: {int(np.nansum(aa[w]))} of {len(judged)} unchanged nights regressed",
              file=sys.stderr)  # fmt: skip
    print(f"held out: {args.held_out}; windows of {args.baselines}, {args.window} nights of "
          f"{args.per_night} launches; 25 % slowdowns of every row of one primitive")  # fmt: skip
    rates = (
        rate_of("A/A, a night alone", aa), rate_of("catch, a night alone", catch),
        rate_of("A/A, confirmed by the next", aa_confirmed),
        rate_of("catch, confirmed by the next", catch_confirmed),
    )  # fmt: skip
    for rate in rates:
        row = rate.row()
        print(f"{row['name']}: {row['value']} {row['interval']}, blocks {row['blocks']}")
    print(f"{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
