"""CPU seconds a launch's processes spend starting: each process's imports in a fresh interpreter
(a comm rank, torchrun's agent, the CLI, against `import torch` alone), and a whole 2-rank launch
(the CLI, torchrun and both ranks):

    python ci/bench_worker_start.py --rounds 5

CPU, not wall: user + system seconds of the process and the children it waited for
(getrusage), which other jobs on a shared box disturb far less than the wall clock. Prints the
median of each over the rounds (docs/performance.md, "Start-up"). `--variant NAME=PATH` (again
for more) also measures the distbench importable from PATH (PYTHONPATH), round by round
alternating with this one, e.g. a `git archive` of an older commit laid out as the package, and
prints the median of the per-round differences (this tree minus it).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

RANK = """
import distbench.worker
from distbench.primitives import registry
from distbench.workloads import WORKLOADS
WORKLOADS[{kind!r}].load_runner()
"""
IMPORTS = {
    "import torch": "import torch",
    "a comm rank": RANK.format(kind="comm"),
    "torchrun's agent": "import torch.distributed.run, distbench.launch.agent",
    "the CLI": "from distbench.cli.app import run_cli",
}
LAUNCH = ["allreduce", "--world-sizes", "2", "--sizes", "1K", "--trials", "2"]


def cpu_s(command: list[str], env: dict[str, str]) -> float:
    """User + system seconds of `command` and its waited-for children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=PATH")
    args = parser.parse_args()
    base = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    variants = {"this tree": base}
    for item in args.variant:
        name, _, path = item.partition("=")
        variants[name] = dict(
            base, PYTHONPATH=os.pathsep.join(filter(None, [path, base.get("PYTHONPATH")]))
        )
    distbench = [sys.executable, "-c", "from distbench.cli import main; main()"]
    cases = [*IMPORTS, "2-rank launch"]
    cpu: dict[tuple[str, str], list[float]] = {(v, c): [] for v in variants for c in cases}
    with tempfile.TemporaryDirectory(prefix="distbench-start-") as folder:
        for index in range(args.rounds):
            order = list(variants) if index % 2 == 0 else list(variants)[::-1]
            for variant in order:
                env = variants[variant]
                for case, code in IMPORTS.items():
                    cpu[variant, case].append(cpu_s([sys.executable, "-c", code], env))
                out = str(Path(folder) / f"run{index}-{list(variants).index(variant)}")
                cpu[variant, "2-rank launch"].append(
                    cpu_s([*distbench, *LAUNCH, "--out", out], env)
                )
            print(f"round {index + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    print(f"median CPU seconds (user + system) over {args.rounds} rounds")
    names = list(variants)
    header = [*names, *(f"minus {v}" for v in names[1:])]
    print(f"{'':18s}" + "".join(f"{v:>14s}" for v in header))
    for case in cases:
        medians = [statistics.median(cpu[v, case]) for v in names]
        paired = [
            statistics.median(a - b for a, b in zip(cpu[names[0], case], cpu[v, case], strict=True))
            for v in names[1:]
        ]
        line = "".join(f"{m:14.2f}" for m in medians) + "".join(f"{d:+14.2f}" for d in paired)
        print(f"{case:18s}{line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
