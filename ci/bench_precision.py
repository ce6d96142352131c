"""Fixed iterations versus --iters auto --precision, side by side (#14 §2): wall time and the p50's
achieved 95 % confidence interval per size, on the default ladder (1K ... 64M x4).

    python ci/bench_precision.py                       # allreduce, gloo, 2 ranks
    python ci/bench_precision.py --out /tmp/bp --rounds 2

Each round runs every configuration once, one after another (so the box's load falls on all of
them alike), as the user would: `distbench allreduce ...` in a subprocess, timed from start to exit.
The table gives, per size, each configuration's ops per trial x trials run and the 95 % interval's
larger half-width in % of the p50 (stats/intervals.py: over trials; "none" where there is none,
below 6 trials in throughput mode), then each run's wall time. --precision decides on the 99 %
interval, so a converged row's printed half-width is below the precision.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import time
from pathlib import Path

CONFIGS = {
    "fixed (defaults: iters 20, trials 5)": [],
    "fixed, trials 10": ["--trials", "10"],
    "--iters auto --precision 2%": ["--iters", "auto", "--precision", "2%"],
}
"""Name -> the options added to the common command line."""


def run(out: Path, extra: list[str], world_size: int) -> float:
    command = [
        sys.executable, "-m", "distbench", "allreduce", "--backend", "gloo",
        "--world-sizes", str(world_size), "--out", str(out), *extra,
    ]  # fmt: skip
    begin = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - begin


def half_width(row: dict[str, str]) -> str:
    if not row["ci_low_us"]:
        return "none"
    p50, low, high = (float(row[k]) for k in ("time_us_p50", "ci_low_us", "ci_high_us"))
    return f"±{max(p50 - low, high - p50) / p50 * 100:.1f} %"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench-precision"))
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--world-size", type=int, default=2)
    args = parser.parse_args()
    for round_ in range(args.rounds):
        walls, rows = {}, {}
        for index, (name, extra) in enumerate(CONFIGS.items()):
            out = args.out / f"round{round_}-config{index}"
            walls[name] = run(out, extra, args.world_size)
            with open(out / "results.csv", newline="") as handle:
                rows[name] = list(csv.DictReader(handle))
        names = list(CONFIGS)
        print(f"\nround {round_ + 1}: allreduce, gloo, {args.world_size} ranks")
        print("| size | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        for i, row in enumerate(rows[names[0]]):
            cells = [
                f"{r[i]['iters']} x {r[i]['trials_run']}, {half_width(r[i])}"
                + (" (not converged)" if r[i]["converged"] == "false" else "")
                for r in (rows[n] for n in names)
            ]
            print(f"| {row['size_bytes']} | " + " | ".join(cells) + " |")
        print("| wall time | " + " | ".join(f"{walls[n]:.1f} s" for n in names) + " |")


if __name__ == "__main__":
    main()
