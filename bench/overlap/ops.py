"""The three ops `distbench overlap` times on every rank, and the check of the overlapped one.

- compute: `iters` fp32 matmuls [N, N] @ [N, N] into one output, on the current stream;
- comm: the collective issued async_op=True, then waited on (each primitive's file builds it:
  its `overlapped` form; this module knows no primitive by name);
- both: the collective issued async_op=True, the compute, then the wait.

comm and both issue the collective the same way, so the two differ only in the compute between
issue and wait. On CUDA the collective is issued from a stream of its own (the comm stream, which
first waits for the current one), as a training framework issues it: NCCL runs the kernel on its
internal stream, `wait()` inside the comm stream makes that stream wait for it, and the current
stream waits for the comm stream at the end of the op. The compute's kernels meanwhile run on the
current stream, so the GPU can run both at once.

The comm and both ops also record spans (`Span`): inside `both`, the compute (CUDA events on the
current stream; the host clock on CPU) and the collective from issue to completion (CUDA events on
the comm stream; on CPU the clock read by a callback that gloo's thread runs as the work completes,
Future.then); in `comm`, the collective's span by the same clock, so that its slowdown compares
like with like.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from distbench.primitives import get_primitive
from distbench.primitives.base import CaseRequest, Context
from distbench.primitives.forms import AsyncCollective as Collective

DTYPE = torch.float32
"""The collective's and the matmul's element type."""


def build_collective(name: str, ctx: Context, requested: int) -> Collective:
    """The collective `name` at `requested` bytes: float32, sum, root rank 0 of the group (its
    primitive's `overlapped` form: the op issued async_op=True and its check)."""
    return get_primitive(name).overlapped(ctx, CaseRequest(requested, DTYPE, "sum", "0"))


class Matmul:
    """`iters` fp32 matmuls [N, N] @ [N, N] into one output buffer: the compute of one op."""

    def __init__(self, n: int, iters: int, device: torch.device) -> None:
        generator = torch.Generator().manual_seed(0)
        # Scaled so the products stay near 1: no overflow, no denormals, however long it runs.
        self.a = (torch.randn(n, n, generator=generator) / n**0.5).to(device)
        self.b = (torch.randn(n, n, generator=generator) / n**0.5).to(device)
        self.out = torch.empty(n, n, device=device)
        self.iters = iters

    def __call__(self) -> None:
        for _ in range(self.iters):
            torch.mm(self.a, self.b, out=self.out)


@dataclass
class Span:
    """One interval of an op: CUDA events, or host clock readings in ns."""

    start: Any
    end: Any = None
    done: list[int] = field(default_factory=list)
    """CPU: the completion callback's clock reading, which ends the span when there is one."""

    def us(self) -> float:
        """The interval in us; on CUDA once the events have passed."""
        if isinstance(self.start, torch.cuda.Event):
            return float(self.start.elapsed_time(self.end)) * 1e3
        end = self.done[0] if self.done else self.end  # no callback: the wait's return
        return float(end - self.start) / 1e3


SPANS = ("compute_in_both", "comm_in_both", "comm_completion")
"""What the ops record besides the timers: `both`'s compute and collective, and the collective
alone from issue to completion by the same clock as inside `both`."""


def on_completion(work: Any, call: Callable[[], None]) -> None:
    """Run `call` on the backend's thread as `work` completes. A Work without a Future (gloo's
    reduce_scatter) gets no call: its Span then ends at the wait's return, an upper bound."""
    try:
        future = work.get_future()
    except RuntimeError:  # "Work::getFuture not implemented"
        return
    future.then(lambda _: call())


def now(span: Span) -> None:
    """End a host span at this moment (its callback reading, if any, takes precedence)."""
    span.end = time.perf_counter_ns()


class Ops:
    """The compute, comm and both ops of one case on this rank, and the spans they record."""

    def __init__(self, ctx: Context, collective: Collective, compute: Callable[[], None]) -> None:
        self.cuda = ctx.device.type == "cuda"
        self.stream = torch.cuda.Stream(ctx.device) if self.cuda else None
        self.collective = collective
        self.compute = compute
        self.spans: dict[str, list[Span]] = {name: [] for name in SPANS}

    def mark(self) -> Any:
        if not self.cuda:
            return time.perf_counter_ns()
        event = torch.cuda.Event(enable_timing=True)
        event.record()  # on the current stream: the comm stream inside `with stream`
        return event

    def issue(self, issue: Callable[[], Any]) -> tuple[Any, Span]:
        """Issue the collective: (work, its span from issue to completion). On CUDA from the
        comm stream, whose end mark the GPU passes when the collective has completed; on CPU
        gloo's thread reads the clock as it completes the work."""
        if self.stream is None:
            span = Span(self.mark())
            work = issue()
            on_completion(work, lambda: span.done.append(time.perf_counter_ns()))
            return work, span
        self.stream.wait_stream(torch.cuda.current_stream())  # its inputs are ready
        with torch.cuda.stream(self.stream):
            start = self.mark()
            work = issue()
            work.wait()  # the comm stream (not the host) waits for NCCL's stream
            return work, Span(start, self.mark())

    def join(self, work: Any, span: Span) -> None:
        """Wait for the collective: the host (gloo) or the current stream (CUDA)."""
        if self.stream is None:
            work.wait()
            now(span)
        else:
            torch.cuda.current_stream().wait_stream(self.stream)

    def run_compute(self) -> None:
        self.compute()

    def run_comm(self) -> None:
        work, span = self.issue(self.collective.issue)
        self.join(work, span)
        self.spans["comm_completion"].append(span)

    def run_both(self) -> None:
        work, comm = self.issue(self.collective.issue)
        compute = Span(self.mark())
        self.compute()
        compute.end = self.mark()
        self.join(work, comm)
        self.spans["compute_in_both"].append(compute)
        self.spans["comm_in_both"].append(comm)

    def take_spans(self) -> dict[str, list[float]]:
        """Every span recorded since the last call, in us (after a drain)."""
        if self.cuda:
            torch.cuda.synchronize()
        taken, self.spans = self.spans, {name: [] for name in SPANS}
        return {name: [span.us() for span in spans] for name, spans in taken.items()}

    def check(self) -> int:
        """Wrong elements on this rank of the collective issued with the compute running."""
        counters: list[Callable[[], int]] = []

        def issue() -> Any:
            work, count_wrong = self.collective.issue_check()
            counters.append(count_wrong)
            return work

        work, span = self.issue(issue)
        self.compute()
        self.join(work, span)
        if self.cuda:
            torch.cuda.synchronize()
        return counters[0]()
