"""The host's cost of issuing one op, and the rows it dominates (`enqueue_us`, `dispatch_bound`).

On CUDA a collective returns as soon as the host has enqueued it: torch's dispatch, c10d's
bookkeeping and NCCL's enqueue, 10-30 us per call. A GPU that finishes the op sooner than that
waits for the host: a throughput row then measures the host's per-call cost, not NCCL (small
sizes on fast links, e.g. <= 64 KB on 8 GPUs). nccl-tests has the same limit; its -G (CUDA
graphs, distbench's --cuda-graph N) removes the per-call host cost.

host_enqueue_us measures that cost in the launch, per row, outside every timed region: after the
warm-up, ENQUEUE_CALLS calls of the row's op, each issued onto an idle stream (a drain first, so
no call waits for a full launch queue), timed on the host clock from the call to its return; the
median over calls, the slowest rank's. Under --cuda-graph the same for one graph replay, / the
ops it holds (comm/graph.py). A row whose time per op is under DISPATCH_FACTOR x that is
dispatch-bound: its number is the host's, and --cuda-graph gives NCCL's.

Only under nccl: gloo's collectives on CPU (and on CUDA tensors) complete before they return, so
the host time of a call is the op itself; those rows leave both columns empty.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable

from distbench.primitives.base import Context
from distbench.ranks import max_over_ranks
from distbench.timing import drain

ENQUEUE_CALLS = 5
"""Calls timed per row (each after a drain): the median of five shrugs off one preemption."""
DISPATCH_FACTOR = 2.0
"""A row is dispatch-bound when its time per op is under this many times the host's enqueue."""


def host_times_us(ctx: Context, run: Callable[[], None], calls: int) -> list[float]:
    """This rank's host time (us) of `calls` calls of run(), each issued onto an idle stream."""
    times = []
    for _ in range(calls):
        drain(ctx.device)
        begin = time.perf_counter_ns()
        run()
        times.append((time.perf_counter_ns() - begin) / 1e3)
    drain(ctx.device)
    return times


def slowest_median(ctx: Context, times_us: list[float], per_call_ops: int) -> float:
    """The median of this rank's times / ops per call, the maximum over the group's ranks (every
    rank calls this: one all_reduce)."""
    return max_over_ranks(ctx, [statistics.median(times_us) / per_call_ops])[0]


def host_enqueue_us(ctx: Context, run: Callable[[], None], ops_per_run: int = 1) -> float:
    """The host's time to issue one op (us; module docstring), or NaN where it is not measured
    (any backend but nccl)."""
    if ctx.backend != "nccl":
        return math.nan
    return slowest_median(ctx, host_times_us(ctx, run, ENQUEUE_CALLS), ops_per_run)


def dispatch_bound(time_us: float, enqueue_us: float) -> str:
    """'true' when the time per op is under DISPATCH_FACTOR x the host's enqueue time, 'false'
    when not, '' when either is unknown."""
    if not (math.isfinite(time_us) and math.isfinite(enqueue_us)):
        return ""
    return str(time_us < DISPATCH_FACTOR * enqueue_us).lower()
