"""A failed night confirmed by the next one: how often would the nightly gate fail if a night
only counted as regressed when the night after it regressed too? Replays the shipped rule on the
recorded launches (as ci/bench_stats.py does), judging each held-out night against fixed
baseline windows, then pairs each judged night with the next judged one. A recording's nights
follow each other within a minute or two, so this is the policy of `ci/nightly.sh --confirm`: a
regressed night swept again at once and failed only when the re-run regresses too.

    python ci/bench_confirm.py --held-out g5 --baselines g5   # g5's own windows (docs/gate.md)
    python ci/bench_confirm.py --held-out g5 --baselines g4   # windows two hours older
    python ci/bench_confirm.py --quick                        # one window (tests/integration)
    python ci/bench_confirm.py --held-out g10 --baselines g8 --per-night 3 --window 14 --no-box-rule

Prints, alone and confirmed: the A/A rate (unchanged nights called regressed) and the catch rate
of a 25 % slowdown of every row of one primitive (both nights slowed); how often the policy ends
in `cannot tell: the box changed` (ci/nightly.sh's exit 5), and the catch rate on the nights that
could tell; each with two intervals:
Clopper-Pearson, which counts nights as independent, and the block interval of
ci/stats_blocks.py (windows and runs of consecutive nights resampled), which lets the nights of
one window, and the nights of one episode, move together.
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
    rate_of,
    regressed,
    replay_nights,
    replay_parser,
    scenarios,
)

EVERY_ROW = "every row of one primitive"


def exit_five(fired: np.ndarray, box: np.ndarray, fired_again: np.ndarray,
              box_again: np.ndarray) -> np.ndarray:  # fmt: skip
    """ci/nightly.sh's exit 5 under confirmation: tonight cannot tell (and nothing regressed), or
    tonight regressed and its re-run cannot tell."""
    alone = (box == 1) & (fired == 0)
    return (alone | ((fired == 1) & (box_again == 1) & (fired_again == 0))).astype(float)


def main(argv: list[str] | None = None) -> int:
    args = parse_replay(replay_parser(__doc__, "g5", window=8, per_night=2), argv)
    started = time.perf_counter()
    judge, held, chosen = replay_nights(args, Gate())
    slow = [(p, np.log(SLOWDOWN) * mask) for p, mask in scenarios(judge.keys)[EVERY_ROW]]
    aa = np.full((len(chosen), len(held)), np.nan)  # windows x held-out nights, nan: not judged
    catch = np.full((*aa.shape, len(slow)), np.nan)
    aa_confirmed, catch_confirmed = aa.copy(), catch.copy()  # at a night: it and the next judged
    # cannot tell (the box changed): any regression (aa_any) and the box (box) of each outcome
    aa_box, catch_box, catch_any = aa.copy(), catch.copy(), catch.copy()
    aa_box_confirmed, catch_box_confirmed = aa.copy(), catch.copy()
    for w, (name, base) in enumerate(chosen):
        judged = [i for i, night in enumerate(held) if night not in base]
        for i in judged:
            outcome = judge.night(base, held[i])
            aa[w, i], aa_box[w, i] = regressed(outcome), bool(outcome.box)
            slowed = [(judge.night(base, held[i], s), p) for p, s in slow]
            catch[w, i] = [regressed(o, p) for o, p in slowed]
            catch_any[w, i] = [regressed(o) for o, _p in slowed]
            catch_box[w, i] = [bool(o.box) for o, _p in slowed]
        for i, j in itertools.pairwise(judged):
            aa_confirmed[w, i] = aa[w, i] * aa[w, j]
            catch_confirmed[w, i] = catch[w, i] * catch[w, j]
            # exit 5: tonight cannot tell, or it regressed and its re-run cannot tell
            aa_box_confirmed[w, i] = exit_five(aa[w, i], aa_box[w, i], aa[w, j], aa_box[w, j])
            catch_box_confirmed[w, i] = exit_five(
                catch_any[w, i], catch_box[w, i], catch_any[w, j], catch_box[w, j]
            )
        print(f"{name}: {int(np.nansum(aa[w]))} of {len(judged)} unchanged nights regressed",
              file=sys.stderr)  # fmt: skip
    print(f"held out: {args.held_out}; windows of {args.baselines}, {args.window} nights of "
          f"{args.per_night} launches; 25 % slowdowns of every row of one primitive")  # fmt: skip
    judged_only = np.where(catch_box_confirmed == 1, np.nan, catch_confirmed)
    rates = (
        rate_of("A/A, a night alone", aa), rate_of("catch, a night alone", catch),
        rate_of("A/A, confirmed by the next", aa_confirmed),
        rate_of("catch, confirmed by the next", catch_confirmed),
        rate_of("A/A, cannot tell (the box changed), confirmed policy", aa_box_confirmed),
        rate_of("catch, cannot tell (the box changed), confirmed policy", catch_box_confirmed),
        rate_of("catch, confirmed, of the nights it could tell", judged_only),
    )  # fmt: skip
    for rate in rates:
        row = rate.row()
        print(f"{row['name']}: {row['value']} {row['interval']}, blocks {row['blocks']}")
    print(f"{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
