"""--cuda-graph N on the ranks, as nccl-tests' -G:

    distbench allreduce --backend nccl --cuda-graph 10 --iters 20 --check

After the measurement's eager warm-up (NCCL's communicator and the buffers exist before any
capture), one more op runs on a side stream, as torch.cuda.graphs asks before a capture, and
`iters` calls of the case's op are captured into one torch.cuda.CUDAGraph. A trial is a barrier,
then N replays between two CUDA events and one drain; its sample is the time / (N x iters), the
time of one op, as nccl-tests -G divides. The host launches N graphs instead of N x iters
collectives, so what the eager cuda_event timer amortises (each op's dispatch) is gone: the
difference between a graph row and its eager twin is the launch cost. Rows: timer
cuda_event+graph, graph = true, iters = ops per graph.

Before trial 0, WARM_REPLAYS untimed replays, each onto an idle stream: the first replay of a
graph uploads it to the device (a one-off cost that would otherwise land in trial 0), and the
host time of the later ones / iters is the row's enqueue_us (comm/dispatch.py).

The capture runs in thread-local mode (CAPTURE_MODE), as nccl-tests captures: a CUDA call that
another thread of the process makes meanwhile (ProcessGroupNCCL's watchdog, the heartbeat) can
then not invalidate it, which the default global mode allows. The warm-up has made NCCL's
connections, whose on-demand setup would allocate inside a capture. Never run on a GPU yet:
ci/gpu-smoke.sh's graph step is the first check.

--check: one op on buffers of the case's form (comm/static.py, allocated as the timed ones, so
symmetric with --buffers symmetric) is captured, the check data copied in, the graph replayed
once, and the result verified as the eager and functional checks verify it: the same data,
counts and comparison.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from distbench.comm.dispatch import host_times_us, slowest_median
from distbench.comm.precision import Trial
from distbench.comm.static import build_static, check_static
from distbench.primitives.base import Case, CaseRequest, Context
from distbench.primitives.forms import Alloc
from distbench.timing import drain, trial_throughput

GRAPH_TIMER = "cuda_event+graph"
"""The timer column of --cuda-graph rows: CUDA events around N replays of a graph of iters ops."""
CAPTURE_MODE = "thread_local"
"""torch.cuda.graph's capture_error_mode (cudaStreamCaptureModeThreadLocal), as nccl-tests."""
WARM_REPLAYS = 3
"""Untimed replays before trial 0: the first uploads the graph, the others time the host."""


def capture_scope(cuda_graph: torch.cuda.CUDAGraph) -> torch.cuda.graph:
    """The capture context of every distbench graph: thread-local capture mode."""
    return torch.cuda.graph(cuda_graph, capture_error_mode=CAPTURE_MODE)


def capture(ctx: Context, run: Callable[[], None], ops: int) -> torch.cuda.CUDAGraph:
    """`ops` calls of run() captured into one graph (nothing runs yet)."""
    current = torch.cuda.current_stream(ctx.device)
    side = torch.cuda.Stream(device=ctx.device)
    side.wait_stream(current)
    with torch.cuda.stream(side):
        run()  # warm-up on a side stream before capturing (every rank runs it: one collective)
    current.wait_stream(side)
    drain(ctx.device)  # no work of this group in flight when the capture begins
    graph = torch.cuda.CUDAGraph()
    with capture_scope(graph):
        for _ in range(ops):
            run()
    drain(ctx.device)
    return graph


def replay_trial(ctx: Context, case: Case, iters: int, replays: int) -> tuple[Trial, float]:
    """The case's op captured `iters` times; a trial of `replays` replays of that graph, in the
    timing.TRIALS signature (its `run` is the captured op, its `iters` the ops per graph), and
    the host's time to issue one op from it (us)."""
    graph = capture(ctx, case.run, iters)
    return timed_replays(ctx, graph.replay, iters, replays)


def timed_replays(
    ctx: Context, replay: Callable[[], None], iters: int, replays: int
) -> tuple[Trial, float]:
    """WARM_REPLAYS untimed replays (the upload; the host's enqueue time per op, from all but the
    first), then the trial: `replays` replays, each of `iters` ops, timed as one."""
    warm = host_times_us(ctx, replay, WARM_REPLAYS)
    enqueue_us = slowest_median(ctx, warm[1:], iters)

    def trial(ctx: Context, run: Callable[[], None], iters: int) -> list[float]:
        # a throughput trial of `replays` graph replays; each replay runs `iters` ops
        return [t / iters for t in trial_throughput(ctx, replay, replays)]

    return trial, enqueue_us


def replayed_check(
    ctx: Context, primitive: str, request: CaseRequest, labels: dict[str, str], alloc: Alloc
) -> Callable[[], int]:
    """The check of the case with these labels, its op replayed from a captured graph."""

    def check() -> int:
        static = build_static(ctx, primitive, request, labels, alloc)
        return check_static(static, capture(ctx, static.run, 1).replay)

    return check


def with_replayed_checks(
    ctx: Context, primitive: str, request: CaseRequest, cases: list[Case], alloc: Alloc
) -> list[Case]:
    """`cases` with their checks replayed from graphs (each built from the case's labels)."""
    for case in cases:
        case.check = replayed_check(ctx, primitive, request, dict(case.labels), alloc)
    return cases
