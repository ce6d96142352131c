"""Time to the first number: a one-measurement distbench run against a bare torchrun launch of a
2-rank gloo init/barrier/destroy script, alternated round by round (paired, so drift and the other
core's load hit both alike), plus `distbench --help`.

    python ci/bench_startup.py --rounds 5

Prints the median wall time of each, the ratio of the medians and the median of per-round
ratios. #11's target: the one-measurement run costs at most 1.2x the bare launch, and
`distbench --help` stays under 0.3 s. The CLI process itself never imports torch
(tests/integration/cli/test_cli_torch_free.py): only torchrun and its ranks do.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BARE = """\
import torch.distributed as dist

dist.init_process_group("gloo")
dist.barrier()
dist.destroy_process_group()
"""

ONE_MEASUREMENT = ["allreduce", "--backend", "gloo", "--world-sizes", "2", "--sizes", "4"]
ONE_MEASUREMENT += ["--iters", "1", "--warmup", "0", "--trials", "1"]


def wall_s(command: list[str], env: dict[str, str]) -> float:
    """Seconds from start to exit; a failed command stops the benchmark."""
    begin = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - begin


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    script = Path(sys.executable).parent / "distbench"  # the console script, as users run it
    distbench = [str(script)] if script.exists() else [sys.executable, "-m", "distbench"]
    with tempfile.TemporaryDirectory(prefix="distbench-startup-") as folder:
        bare = Path(folder) / "bare.py"
        bare.write_text(BARE)
        torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
        torchrun += ["--nproc-per-node", "2", str(bare)]
        runs: list[float] = []
        bares: list[float] = []
        helps: list[float] = []
        wall_s(torchrun, env)  # warm the file cache for both
        for index in range(args.rounds):
            out = ["--out", str(Path(folder) / f"run{index}")]
            pair = [("run", [*distbench, *ONE_MEASUREMENT, *out]), ("bare", torchrun)]
            for name, command in pair if index % 2 == 0 else pair[::-1]:
                (runs if name == "run" else bares).append(wall_s(command, env))
            helps.append(wall_s([*distbench, "--help"], env))
            print(
                f"round {index + 1}: distbench {runs[-1]:.2f} s, bare torchrun {bares[-1]:.2f} s, "
                f"--help {helps[-1]:.3f} s",
                flush=True,
            )
    run_s, bare_s = statistics.median(runs), statistics.median(bares)
    paired = statistics.median(r / b for r, b in zip(runs, bares, strict=True))
    print(f"one-measurement run: median {run_s:.2f} s")
    print(f"bare torchrun:       median {bare_s:.2f} s")
    print(f"ratio of medians:    {run_s / bare_s:.2f}x (median of per-round ratios {paired:.2f}x)")
    print(f"distbench --help:    median {statistics.median(helps):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
