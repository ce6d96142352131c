"""The three ops `distbench overlap` times on every rank, and the check of the overlapped one.

- compute: `iters` fp32 matmuls [N, N] @ [N, N] into one output, on the current stream;
- comm: the collective issued async_op=True, then waited on;
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
import torch.distributed as dist

from distbench.primitives import checkdata
from distbench.primitives.base import Context, element_count
from distbench.primitives.registry import PRIMITIVES

DTYPE = torch.float32
"""The collective's and the matmul's element type."""


@dataclass(frozen=True)
class Collective:
    """One collective on prepared buffers, issued async_op=True."""

    size_bytes: int
    """nccl-tests' size: one rank's buffer (all_reduce, broadcast), the gathered one (all_gather,
    reduce_scatter)."""
    count: int
    issue: Callable[[], Any]
    """Issue it on the timed buffers; returns the Work."""
    issue_check: Callable[[], tuple[Any, Callable[[], int]]]
    """Fill the check data, issue it on them; returns (Work, count of wrong elements on this
    rank, to call after the wait)."""


def build_collective(name: str, ctx: Context, requested: int) -> Collective:
    """The collective `name` at `requested` bytes: float32, sum, root rank 0 of the group."""
    n, me, dev, group = ctx.world_size, ctx.rank, ctx.device, ctx.group
    count = element_count(requested, DTYPE, PRIMITIVES[name].count_multiple(n, DTYPE))
    per_rank, root = count // n, ctx.global_ranks[0] if ctx.global_ranks else 0
    buffer = torch.zeros(count, dtype=DTYPE, device=dev)  # all_gather's output, else the input
    chunk = torch.zeros(per_rank, dtype=DTYPE, device=dev)  # all_gather's input, r_s's output

    def issue() -> Any:
        if name == "all_reduce":
            return dist.all_reduce(buffer, group=group, async_op=True)
        if name == "broadcast":
            return dist.broadcast(buffer, src=root, group=group, async_op=True)
        if name == "all_gather":
            return dist.all_gather_into_tensor(buffer, chunk, group=group, async_op=True)
        return dist.reduce_scatter_tensor(chunk, buffer, group=group, async_op=True)

    def issue_check() -> tuple[Any, Callable[[], int]]:
        if name == "all_reduce":
            data = checkdata.fill(count, me, n, DTYPE, dev, "sum")
            work = dist.all_reduce(data, group=group, async_op=True)
            return work, lambda: checkdata.wrong_reduced(data, n, "sum")
        if name == "broadcast":  # the other ranks start wrong everywhere
            data = checkdata.fill_pattern(count, 0, DTYPE, dev) if me == 0 else sentinel(count, dev)
            work = dist.broadcast(data, src=root, group=group, async_op=True)
            return work, lambda: checkdata.wrong_moved(data, 0)
        if name == "all_gather":  # chunk r of the result must hold rank r's data
            result, mine = sentinel(count, dev), checkdata.fill_pattern(per_rank, me, DTYPE, dev)
            work = dist.all_gather_into_tensor(result, mine, group=group, async_op=True)
            chunks = result.split(per_rank)
            return work, lambda: sum(checkdata.wrong_moved(chunks[r], r) for r in range(n))
        data, out = checkdata.fill(count, me, n, DTYPE, dev, "sum"), sentinel(per_rank, dev)
        work = dist.reduce_scatter_tensor(out, data, group=group, async_op=True)
        return work, lambda: checkdata.wrong_reduced(out, n, "sum", start=me * per_rank)

    return Collective(count * DTYPE.itemsize, count, issue, issue_check)


def sentinel(count: int, device: torch.device) -> torch.Tensor:
    """A receive buffer wrong at every element until the collective writes it ([count])."""
    return checkdata.fill_sentinel(count, DTYPE, device)


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
