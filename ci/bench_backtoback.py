"""Two identical runs back to back, compared with plain defaults: how often does compare pass?
A new user's first check of the gate (#25: >= 19 of 20 tries). Real launches, not a replay: each
try runs the command twice and `distbench compare A B` with no option but the two runs.

    python ci/bench_backtoback.py --tries 20                    # allreduce and ddp, defaults
    python ci/bench_backtoback.py --tries 5 --command "distbench allreduce --sizes 1K,1M"

Prints, per command, the passes out of the tries with a Clopper-Pearson interval, the states of
the compared rows summed over the tries, and the seconds it took. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from scipy import stats as sps

COMMANDS = ("distbench allreduce --backend gloo", "distbench ddp --backend gloo")


def run(command: str, out: Path) -> None:
    subprocess.run([*shlex.split(command), "--out", str(out)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip


def one_try(command: str, folder: Path) -> tuple[int, Counter[str]]:
    a, b = folder / "a", folder / "b"
    run(command, a)
    run(command, b)
    done = subprocess.run(
        ["distbench", "compare", str(a), str(b), "--format", "json"], capture_output=True, text=True
    )
    body = json.loads(done.stdout)
    return done.returncode, Counter(row["state"] for row in body["rows"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tries", type=int, default=20)
    parser.add_argument("--command", action="append", default=None)
    args = parser.parse_args(argv)
    for command in args.command or COMMANDS:
        started, passes, states = time.perf_counter(), 0, Counter[str]()
        for attempt in range(args.tries):
            with tempfile.TemporaryDirectory() as folder:
                code, counted = one_try(command, Path(folder))
            passes += code == 0
            states += counted
            print(
                f"{command}: try {attempt + 1}: exit {code} {dict(counted)}",
                file=sys.stderr,
                flush=True,
            )
        low = sps.beta.ppf(0.025, passes, args.tries - passes + 1) if passes else 0.0
        high = sps.beta.ppf(0.975, passes + 1, args.tries - passes) if passes < args.tries else 1.0
        print(f"| {command} | {passes} of {args.tries} passed [{low:.0%}, {high:.0%}] | "
              f"{dict(states)} | {time.perf_counter() - started:.0f} s |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
