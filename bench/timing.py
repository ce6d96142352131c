"""Timing loops for the two labelled modes of ../shared/METHOD.md.

throughput: warm-up, barrier, `iters` ops back to back, one drain, time / iters; one sample per
            trial (nccl-tests' default cadence).
latency:    warm-up, then per op: barrier, time the op alone until it completes; one sample per op
            (OSU / IMB cadence).

On CPU the clock is time.perf_counter_ns after the op has returned complete (timer
`perf_counter`). On CUDA it is a pair of CUDA events around the ops, and every clock read follows
a drain, so nothing in flight is left out. The timer column says what a CUDA sample holds:

- `cuda_event` (throughput): the start event is recorded on an idle stream after the barrier, then
  `iters` ops are enqueued back to back. The first op's host dispatch (kernel launch, NCCL's
  enqueue) lands inside the interval, amortised over `iters`. This is how nccl-tests times its
  default rows (`time`, algbw, busbw), so these rows compare with nccl-tests' numbers.
- `cuda_event+dispatch` (latency): the same events around a single op. The stream is idle when the
  start event is recorded, so the GPU reaches the end event only after the host has dispatched the
  op: every sample includes host dispatch, a few µs, which nccl-tests' numbers amortise away. It is
  what one isolated call costs (OSU/IMB's cadence), not the GPU's time for the op alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch
import torch.distributed as dist

from distbench.primitives.base import Context

TIMER_NAMES = {
    ("cpu", "throughput"): "perf_counter",
    ("cpu", "latency"): "perf_counter",
    ("cuda", "throughput"): "cuda_event",
    ("cuda", "latency"): "cuda_event+dispatch",
}
"""(device type, mode) -> the timer column: what clock made a sample and what it includes."""


def timer_name(device: torch.device, mode: str = "throughput") -> str:
    """The timer label of a row measured on `device` in `mode` (see the module docstring)."""
    return TIMER_NAMES["cuda" if device.type == "cuda" else "cpu", mode]


def drain(device: torch.device) -> None:
    """Wait until every op this rank enqueued has completed (a no-op for gloo on CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def barrier(ctx: Context) -> None:
    """All ranks of the group arrive, and (on CUDA) the barrier itself has finished on the GPU."""
    if ctx.backend == "nccl":
        dist.barrier(group=ctx.group, device_ids=ctx.local_device_ids)
    else:
        dist.barrier(group=ctx.group)
    drain(ctx.device)


def time_throughput(
    ctx: Context, run: Callable[[], None], iters: int, warmup: int, trials: int
) -> list[float]:
    """Per-trial average time of one op in microseconds, `trials` samples."""
    for _ in range(warmup):
        run()
    drain(ctx.device)
    samples = []
    cuda = ctx.device.type == "cuda"
    for _ in range(trials):
        barrier(ctx)
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                run()
            end.record()
            end.synchronize()
            elapsed_us = start.elapsed_time(end) * 1e3
        else:
            begin = time.perf_counter_ns()
            for _ in range(iters):
                run()
            elapsed_us = (time.perf_counter_ns() - begin) / 1e3
        samples.append(elapsed_us / iters)
    return samples


def time_latency(
    ctx: Context, run: Callable[[], None], iters: int, warmup: int, trials: int
) -> list[float]:
    """Time of each op on its own in microseconds, `trials * iters` samples (trial-major)."""
    for _ in range(warmup):
        run()
    drain(ctx.device)
    samples: list[float] = []
    cuda = ctx.device.type == "cuda"
    for _ in range(trials):
        events = []
        for _ in range(iters):
            barrier(ctx)
            if cuda:
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                run()
                end.record()
                end.synchronize()
                events.append((start, end))
            else:
                begin = time.perf_counter_ns()
                run()
                samples.append((time.perf_counter_ns() - begin) / 1e3)
        samples.extend(start.elapsed_time(end) * 1e3 for start, end in events)
    return samples


TIMERS = {"throughput": time_throughput, "latency": time_latency}


def max_over_ranks(ctx: Context, samples: list[float]) -> list[float]:
    """Per-sample maximum over the ranks of the group: what a training step waits for.
    One all_reduce, whatever the world size."""
    device = ctx.device if ctx.backend == "nccl" else torch.device("cpu")
    tensor = torch.tensor(samples, dtype=torch.float64, device=device)  # [samples]
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX, group=ctx.group)
    return [float(x) for x in tensor.cpu().tolist()]


def sum_over_ranks(ctx: Context, value: int) -> int:
    device = ctx.device if ctx.backend == "nccl" else torch.device("cpu")
    tensor = torch.tensor([value], dtype=torch.int64, device=device)
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM, group=ctx.group)
    return int(tensor.item())
