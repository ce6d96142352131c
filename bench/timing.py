"""Timing loops for the two labelled modes (docs/method.md, "Two timing modes, always labelled").

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


class Clock:
    """Marks on this rank's timeline: the one clock of every timed region (the comm loops below,
    DDP's steps in ddp/steps.py).

    cuda: a CUDA event recorded on the current stream at each mark. The GPU passes it once the
    work enqueued before it is done, so the marks are read after `time_call`'s wait or a drain.
    cpu: time.perf_counter_ns at each mark; the ops between marks have returned complete (gloo's
    collectives on CPU finish before they return).
    """

    def __init__(self, device: torch.device) -> None:
        self.cuda = device.type == "cuda"
        self.events: list[torch.cuda.Event] = []
        self.host_ns: list[int] = []

    def mark(self) -> None:
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            self.events.append(event)
        else:
            self.host_ns.append(time.perf_counter_ns())

    def time_call(self, run: Callable[[], None]) -> None:
        """Mark, run(), mark, and wait until the GPU has passed the second mark. Both events are
        made first and the clock is read inline, not through mark(): nothing of the harness but
        the call itself lies between the marks."""
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            run()
            end.record()
            end.synchronize()
            self.events += [start, end]
        else:
            begin = time.perf_counter_ns()
            run()
            end_ns = time.perf_counter_ns()
            self.host_ns += [begin, end_ns]

    def elapsed_us(self) -> float:
        """Time from the first mark to the last (us)."""
        if self.cuda:
            return self.events[0].elapsed_time(self.events[-1]) * 1e3
        return (self.host_ns[-1] - self.host_ns[0]) / 1e3

    def intervals_us(self) -> list[float]:
        """Time between consecutive marks (us)."""
        if self.cuda:
            pairs = zip(self.events, self.events[1:], strict=False)
            return [start.elapsed_time(end) * 1e3 for start, end in pairs]
        return [(b - a) / 1e3 for a, b in zip(self.host_ns, self.host_ns[1:], strict=False)]


def warm_up(ctx: Context, run: Callable[[], None], warmup: int) -> None:
    """`warmup` untimed ops, then a drain: the first timed op finds nothing in flight."""
    for _ in range(warmup):
        run()
    drain(ctx.device)


def trial_throughput(ctx: Context, run: Callable[[], None], iters: int) -> list[float]:
    """One trial: barrier, `iters` ops back to back, one drain; one sample, the average time of
    one op in microseconds."""

    def run_iters() -> None:  # one call per trial around the loop: the clock sees ~50 ns / iters
        for _ in range(iters):
            run()

    barrier(ctx)
    clock = Clock(ctx.device)
    clock.time_call(run_iters)
    return [clock.elapsed_us() / iters]


def trial_latency(ctx: Context, run: Callable[[], None], iters: int) -> list[float]:
    """One trial: `iters` ops, each after a barrier and timed alone; `iters` samples (us)."""
    clocks = []
    for _ in range(iters):
        barrier(ctx)
        clock = Clock(ctx.device)
        clock.time_call(run)
        clocks.append(clock)
    return [clock.elapsed_us() for clock in clocks]  # read once the trial is done


TRIALS = {"throughput": trial_throughput, "latency": trial_latency}
"""mode -> one trial of it. The runner warms up once, then runs trials until it has enough
(a fixed --trials, or until --precision is met: comm/precision.py)."""


def time_throughput(
    ctx: Context, run: Callable[[], None], iters: int, warmup: int, trials: int
) -> list[float]:
    """Per-trial average time of one op in microseconds, `trials` samples."""
    warm_up(ctx, run, warmup)
    return [t for _ in range(trials) for t in trial_throughput(ctx, run, iters)]


def time_latency(
    ctx: Context, run: Callable[[], None], iters: int, warmup: int, trials: int
) -> list[float]:
    """Time of each op on its own in microseconds, `trials * iters` samples (trial-major)."""
    warm_up(ctx, run, warmup)
    return [t for _ in range(trials) for t in trial_latency(ctx, run, iters)]
