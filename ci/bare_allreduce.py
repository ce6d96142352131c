"""The bare reference loop: plain dist.all_reduce in a loop, nothing else. distbench's harness is
measured against it (ci/bench_overhead.py). Run alone it prints a per-size table:

    python -m torch.distributed.run --standalone --nproc-per-node 2 ci/bare_allreduce.py
"""

from __future__ import annotations

import time

import torch
import torch.distributed as dist


def bare_allreduce_us(tensor: torch.Tensor, iters: int) -> float:
    """Microseconds per all_reduce over `iters` back-to-back calls (CPU tensors, gloo)."""
    dist.barrier()
    begin = time.perf_counter_ns()
    for _ in range(iters):
        dist.all_reduce(tensor)
    return (time.perf_counter_ns() - begin) / 1e3 / iters


def main() -> None:
    dist.init_process_group("gloo")
    for size in (4, 1024, 65536, 1 << 20):
        tensor = torch.zeros(size // 4)
        bare_allreduce_us(tensor, 5)  # warm-up
        us = bare_allreduce_us(tensor, 50)
        if dist.get_rank() == 0:
            print(f"{size:>10} B  {us:10.1f} us")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
