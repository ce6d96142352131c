"""Record pairs of latency launches, `--order sequential` then the default (`auto`: grouped), for
ci/bench_stats_intervals.py's order rows: the per-trial times of each row (rank -1 of
samples.csv, the maximum over ranks of each op) into a gzipped JSON of the layout of
tests/data/interval-trials-order.json.gz.

    python ci/record_order_pairs.py --pairs 6 --load quiet --out /tmp/pairs-quiet.json.gz
    python ci/record_order_pairs.py --pairs 6 --load burst --out /tmp/pairs-burst.json.gz

`--load burst`: one process beside the launches, busy and idle for 0.3-2 s each at random (as
the 2026-12-05 recordings). Each launch is `distbench allreduce --backend gloo --world-sizes 2
--mode latency --sizes 1K,4K,16K,64K,256K,1M --trials 30` (20 ops a trial, two groups of 3).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import multiprocessing
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES = "1K,4K,16K,64K,256K,1M"
COMMAND = ["allreduce", "--backend", "gloo", "--world-sizes", "2", "--mode", "latency",
           "--sizes", SIZES, "--trials", "30", "--quiet"]  # fmt: skip


def burst(seed: int) -> None:
    """Busy and idle for 0.3-2 s each, at random, until killed."""
    rng = random.Random(seed)
    while True:
        end = time.monotonic() + rng.uniform(0.3, 2.0)
        while time.monotonic() < end:
            pass
        time.sleep(rng.uniform(0.3, 2.0))


def launch(out: Path, order: str) -> list[dict[str, object]]:
    extra = ["--order", "sequential"] if order == "sequential" else []
    done = subprocess.run([sys.executable, "-m", "distbench", *COMMAND, *extra, "--out", str(out)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    with open(out / "results.csv", newline="") as handle:
        rows = {r["measurement"]: r for r in csv.DictReader(handle)}
    trials: dict[str, dict[int, list[tuple[int, float]]]] = {}
    with open(out / "samples.csv", newline="") as handle:
        for s in csv.DictReader(handle):
            if s["rank"] == "-1":
                per = trials.setdefault(s["measurement"], {})
                per.setdefault(int(s["trial"]), []).append((int(s["iter"]), float(s["time_us"])))
    return [
        {
            "order": rows[m]["trial_order"],
            "size_bytes": int(rows[m]["size_bytes"]),
            "trials": [[t for _i, t in sorted(per[k])] for k in sorted(per)],
        }
        for m, per in trials.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--load", choices=("quiet", "burst"), default="quiet")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    load = "quiet" if args.load == "quiet" else "one burst process"
    noise = multiprocessing.Process(target=burst, args=(1,), daemon=True)
    if args.load == "burst":
        noise.start()
    entries = []
    stamp = time.strftime("%Y%m%d-%H%M", time.gmtime())
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for pair in range(args.pairs):
                for order in ("sequential", "grouped"):
                    name = f"{args.load}-{stamp}-{order[:3]}{pair + 1}"
                    for entry in launch(Path(tmp) / name, order):
                        entries.append({"launch": name, "load": load, **entry})
                    print(name, file=sys.stderr, flush=True)
    finally:
        if noise.is_alive():
            noise.kill()
    about = (f"per-trial times (us, rank -1 of samples.csv) of real gloo launches, {stamp} UTC: "
             f"pairs of 'distbench {' '.join(COMMAND)} --order sequential' and the same with "
             f"the default order (grouped), {args.pairs} pairs, {load}")  # fmt: skip
    with gzip.open(args.out, "wt") as sink:
        json.dump({"about": about, "latency": entries}, sink)


if __name__ == "__main__":
    main()
