"""Does distbench's timing loop add overhead? It runs the bare reference loop
(ci/bare_allreduce.py) and distbench's own throughput loop alternately, in the same process
group, on the same buffer, and compares their medians.

    python -m torch.distributed.run --standalone --nproc-per-node 2 ci/bench_overhead.py \
        --sizes 4,64,1K,4K,16K,64K --rounds 41 --iters 50

Each round times `iters` back-to-back all_reduces with three loops, in an order that rotates
between rounds so drift and the other core's load hit all alike: the bare loop, distbench's loop,
and the bare loop again (an A/A control: how far two identical loops disagree on this machine).
A round's time is the max over ranks. Prints per size: the medians of the bare loop and of
distbench's loop, their ratio and the same ratio for the A/A control; then the median of
per-round ratios (paired: robust to drift and to gloo's bimodal latencies on a small VM) for
distbench and for the control. The verdict uses the paired ratio; the A/A columns are the noise
floor any difference must be read against.
With --strict, exit code 1 when a size is outside tolerance.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bare_allreduce import bare_allreduce_us

from distbench.parse import parse_sizes
from distbench.primitives import get_primitive
from distbench.primitives.base import CaseRequest, Context
from distbench.ranks import max_over_ranks
from distbench.timing import time_throughput


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4,64,1K,4K,16K,64K")
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--tolerance", type=float, default=0.05)
    parser.add_argument("--strict", action="store_true", help="exit 1 when outside tolerance")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    ctx = Context(
        rank=rank,
        world_size=world,
        device=torch.device("cpu"),
        backend="gloo",
        global_ranks=tuple(range(world)),
    )
    all_reduce = get_primitive("all_reduce")
    within = True
    if rank == 0:
        print(f"# all_reduce gloo world_size={world} iters={args.iters} rounds={args.rounds}")
        print(
            f"#{'size':>9} {'bare_us':>9} {'distbench_us':>12} {'ratio':>6} {'A/A':>6} "
            f"{'paired':>7} {'A/A':>6}  verdict (paired ratio within ±{args.tolerance:.0%})"
        )
    for size in parse_sizes(args.sizes):
        case = all_reduce.build_cases(ctx, CaseRequest(size, torch.float32, "sum", "0"))[0]
        tensor = torch.zeros(case.count)  # the bare loop's own buffer, same size
        loops: list[Callable[[], float]] = [
            lambda: bare_allreduce_us(tensor, args.iters),  # noqa: B023 (used in this iteration)
            lambda: time_throughput(ctx, case.run, args.iters, 0, 1)[0],  # noqa: B023
            lambda: bare_allreduce_us(tensor, args.iters),  # noqa: B023 (the A/A control)
        ]
        for loop in loops:  # warm-up every path
            loop()
        rounds: list[list[float]] = []
        for round_index in range(args.rounds):
            times = [0.0, 0.0, 0.0]
            for k in range(3):  # rotate the order so no loop always runs first
                which = (round_index + k) % 3
                times[which] = loops[which]()
            rounds.append(max_over_ranks(ctx, times))
        bare, harness, control = ([r[i] for r in rounds] for i in range(3))
        ratio = statistics.median(harness) / statistics.median(bare)
        paired = statistics.median(h / b for h, b in zip(harness, bare, strict=True))
        aa_ratio = statistics.median(control) / statistics.median(bare)
        aa = statistics.median(c / b for c, b in zip(control, bare, strict=True))
        ok = abs(paired - 1) <= args.tolerance
        within &= ok
        if rank == 0:
            print(
                f"{size:>10} {statistics.median(bare):9.1f} {statistics.median(harness):12.1f} "
                f"{ratio:6.3f} {aa_ratio:6.3f} {paired:7.3f} {aa:6.3f}  "
                f"{'ok' if ok else 'OUTSIDE'}",
                flush=True,
            )
    dist.destroy_process_group()
    return 0 if within or not args.strict else 1


if __name__ == "__main__":
    sys.exit(main())
