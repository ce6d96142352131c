"""Does distbench's timing loop add overhead? It runs the bare reference loop
(ci/bare_allreduce.py) and distbench's own throughput loop alternately, in the same process
group, on the same buffer, and compares their medians.

    python -m torch.distributed.run --standalone --nproc-per-node 2 ci/bench_overhead.py \
        --sizes 4,64,1K,4K,16K,64K --rounds 41 --iters 50

Each round times `iters` back-to-back all_reduces with each loop (order alternating between
rounds, so drift and the other core's load hit both alike); a round's time is the max over ranks.
Prints per size: the two medians, their ratio, and whether distbench is within --tolerance.
With --strict, exit code 1 when a size is outside tolerance.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bare_allreduce import bare_allreduce_us

from distbench.parse import parse_sizes
from distbench.primitives import get_primitive
from distbench.primitives.base import Context
from distbench.timing import max_over_ranks, time_throughput


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
        print(f"#{'size':>9} {'bare_us':>10} {'distbench_us':>13} {'ratio':>7}  verdict")
    for size in parse_sizes(args.sizes):
        case = all_reduce.build_cases(ctx, size, torch.float32, "sum", "0")[0]
        tensor = torch.zeros(case.count)  # the bare loop's own buffer, same size
        bare_allreduce_us(tensor, 10)  # warm-up both paths
        time_throughput(ctx, case.run, 10, 0, 1)
        bare, harness = [], []
        for round_index in range(args.rounds):
            if round_index % 2 == 0:
                bare_us = bare_allreduce_us(tensor, args.iters)
                harness_us = time_throughput(ctx, case.run, args.iters, 0, 1)[0]
            else:
                harness_us = time_throughput(ctx, case.run, args.iters, 0, 1)[0]
                bare_us = bare_allreduce_us(tensor, args.iters)
            maxed = max_over_ranks(ctx, [bare_us, harness_us])
            bare.append(maxed[0])
            harness.append(maxed[1])
        ratio = statistics.median(harness) / statistics.median(bare)
        ok = abs(ratio - 1) <= args.tolerance
        within &= ok
        if rank == 0:
            print(
                f"{size:>10} {statistics.median(bare):10.1f} {statistics.median(harness):13.1f} "
                f"{ratio:7.3f}  {'ok' if ok else 'OUTSIDE'} ±{args.tolerance:.0%}",
                flush=True,
            )
    dist.destroy_process_group()
    return 0 if within or not args.strict else 1


if __name__ == "__main__":
    sys.exit(main())
