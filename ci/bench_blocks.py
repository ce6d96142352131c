"""How often the per-night rates' intervals hold the true rate when nights fail in episodes, as
a shared box's do (docs/gate.md: how sure these rates are): Clopper-Pearson, the block
bootstrap's own percentiles, and the block interval ci/bench_stats.py and ci/bench_confirm.py
print (ci/stats_blocks.py).

    python ci/bench_blocks.py    # 400 replays a row (11 s)

Each replay draws nights of a shared box with episodes: each night starts one with probability
EPISODE_START, lasting EPISODE_NIGHTS nights, in which any window's verdict fails with
probability EPISODE_FAIL; outside, with a probability that differs between windows. The true
rate is the model's expectation over windows and nights. Drawn from this model, not from the
block interval's own.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its siblings, however it is loaded
from stats_blocks import BLOCK, block_interval, clopper_pearson, percentile_interval

EPISODE_START = 0.04
EPISODE_NIGHTS = 3
EPISODE_FAIL = 0.6
QUIET_FAIL = (0.0, 0.04)
"""Each window's false-alarm rate outside episodes: uniform over this range."""


def simulate(rng: np.random.Generator, windows: int, nights: int) -> tuple[np.ndarray, float, bool]:
    """One replay of the model (module docstring): (windows x nights outcomes, the true rate,
    whether any night of it was in an episode)."""
    starts = np.flatnonzero(rng.random(nights + EPISODE_NIGHTS - 1) < EPISODE_START)
    episode = np.zeros(nights + EPISODE_NIGHTS - 1, bool)
    for first in starts:  # an episode that starts before the first night may still cover it
        episode[first : first + EPISODE_NIGHTS] = True
    episode = episode[EPISODE_NIGHTS - 1 :]
    quiet = rng.uniform(*QUIET_FAIL, size=windows)
    p = np.where(episode[None, :], EPISODE_FAIL, quiet[:, None])
    in_episode = 1 - (1 - EPISODE_START) ** EPISODE_NIGHTS
    truth = in_episode * EPISODE_FAIL + (1 - in_episode) * float(np.mean(QUIET_FAIL))
    return (rng.random((windows, nights)) < p).astype(float), truth, bool(episode.any())


def coverage(
    runs: int, windows: int, nights: int, block: int = BLOCK, reps: int = 500, seed: int = 0
) -> dict[str, float]:
    """How often Clopper-Pearson, the bootstrap's percentiles and the printed block interval hold
    the true rate, over `runs` replays; and the share of replays with no episode at all, where no
    interval from their nights can know the episodes' part of the rate."""
    rng = np.random.default_rng(seed)
    held = {"clopper-pearson": 0, "percentiles": 0, "blocks": 0, "no episode": 0}
    for run in range(runs):
        outcomes, truth, episode = simulate(rng, windows, nights)
        held["no episode"] += not episode
        low, high = clopper_pearson(int(outcomes.sum()), outcomes.size)
        held["clopper-pearson"] += low <= truth <= high
        low, high = percentile_interval(outcomes, block, reps, seed=run)
        held["percentiles"] += low <= truth <= high
        low, high, _n = block_interval(outcomes, block, reps, seed=run)
        held["blocks"] += low <= truth <= high
    return {name: hits / runs for name, hits in held.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"episodes: start {EPISODE_START} a night, {EPISODE_NIGHTS} nights, fail "
          f"{EPISODE_FAIL}; quiet windows fail {QUIET_FAIL[0]}-{QUIET_FAIL[1]}; "
          f"{args.runs} replays")  # fmt: skip
    print("| windows | nights | block | Clopper-Pearson | block percentiles | blocks (printed) "
          "| replays without an episode |\n|---|---|---|---|---|---|---|")  # fmt: skip
    for windows, nights, block in ((6, 40, BLOCK), (3, 40, BLOCK), (6, 40, 2), (6, 40, 8)):
        held = coverage(args.runs, windows, nights, block, seed=args.seed)
        print(f"| {windows} | {nights} | {block} | {held['clopper-pearson']:.1%} | "
              f"{held['percentiles']:.1%} | {held['blocks']:.1%} | "
              f"{held['no episode']:.1%} |")  # fmt: skip
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
