"""Rank side of `distbench rpc`: torch.distributed.rpc over TensorPipe beside the launch's gloo
group, which only aligns the trials (barriers) and takes the maximum over ranks (tensors).

    torchrun --nproc-per-node 2 -m distbench.worker RUN/spec.json    # the CLI starts it

sync, async and rref: every rank calls its neighbour (rank + 1) % n at the same time; ps: ranks
1..n-1 are workers and rank 0 the parameter server. Each trial starts after a barrier. As each
measurement ends, the per-sample maximum over the ranks that called (the slowest) reaches every
rank in one tensor all_reduce (ranks.max_by_slot), and rank 0 writes those samples (rank -1), then
the row. Each rank keeps its own samples for --rank-samples, written at the end.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed import rpc

from distbench.collectors.schema import ResultRow, SampleRow
from distbench.collectors.sink import run_sinks
from distbench.groups import gather_placement
from distbench.ports import free_ports
from distbench.primitives.base import Context
from distbench.ranks import max_by_slot, save_rank_samples
from distbench.rpc.rows import LATENCY_PATTERNS, rpc_row, sample_rows, write_measurement
from distbench.rpc.spec import RpcSpec
from distbench.spec import RunSpec, measurement_id


def echo(tensor: torch.Tensor) -> torch.Tensor:
    """sync/async: the callee returns what it got."""
    return tensor


def make_tensor(count: int) -> torch.Tensor:
    """rref: the callee creates the tensor the reference points to."""
    return torch.ones(count)


class ParamServer:
    """Rank 0's parameters: each step waits for every worker's gradient, averages them and
    returns the parameters to all (the batch-update server of PyTorch's rpc tutorials)."""

    def __init__(self, count: int, workers: int) -> None:
        self.params = torch.zeros(count)
        self.pending = torch.zeros(count)
        self.workers, self.arrived = workers, 0
        self.lock = threading.Lock()
        self.future: torch.futures.Future[torch.Tensor] = torch.futures.Future()

    def add(self, grad: torch.Tensor) -> torch.futures.Future[torch.Tensor]:
        with self.lock:
            self.pending += grad
            self.arrived += 1
            future = self.future
            if self.arrived == self.workers:
                self.params -= self.pending / self.workers
                self.pending.zero_()
                self.arrived = 0
                self.future = torch.futures.Future()
                future.set_result(self.params.clone())
        return future


SERVER: ParamServer | None = None
"""Rank 0's parameter server of the current size (ps)."""


@rpc.functions.async_execution
def ps_update(grad: torch.Tensor) -> torch.futures.Future[torch.Tensor]:
    assert SERVER is not None, "ps_update reached a rank without a parameter server"
    return SERVER.add(grad)


def call_loop(pattern: str, spec: RpcSpec, peer: str, count: int) -> Callable[[int], None]:
    """`run(n)`: n calls (async: n windows; ps: n steps) of the pattern to `peer`."""
    tensor = torch.ones(count)

    def sync(n: int) -> None:
        for _ in range(n):
            rpc.rpc_sync(peer, echo, args=(tensor,))

    def asynchronous(n: int) -> None:
        for _ in range(n):
            torch.futures.wait_all(
                [rpc.rpc_async(peer, echo, args=(tensor,)) for _ in range(spec.window)]
            )

    def rref(n: int) -> None:
        for _ in range(n):
            rpc.remote(peer, make_tensor, args=(count,)).to_here()

    def ps(n: int) -> None:
        for _ in range(n):
            rpc.rpc_async("w0", ps_update, args=(tensor,)).wait()

    return {"sync": sync, "async": asynchronous, "rref": rref, "ps": ps}[pattern]


def measure(ctx: Context, spec: RpcSpec, pattern: str, count: int) -> list[float]:
    """This rank's samples, us per call (latency patterns: one per call; async and ps: one per
    trial, its time / calls); empty on rank 0 for ps, which serves."""
    global SERVER
    calls = spec.window if pattern == "async" else 1
    latency = pattern in LATENCY_PATTERNS
    caller = not (pattern == "ps" and ctx.rank == 0)
    if pattern == "ps" and ctx.rank == 0:
        SERVER = ParamServer(count, ctx.world_size - 1)
    dist.barrier()  # the server exists before any worker calls
    run = call_loop(pattern, spec, f"w{(ctx.rank + 1) % ctx.world_size}", count)
    if caller:
        run(spec.warmup)
    samples: list[float] = []
    for _ in range(spec.trials):
        dist.barrier()
        if not caller:
            continue
        if latency:
            for _ in range(spec.iters):
                start = time.perf_counter()
                run(1)
                samples.append((time.perf_counter() - start) * 1e6)
        else:
            start = time.perf_counter()
            run(spec.iters)
            samples.append((time.perf_counter() - start) * 1e6 / (spec.iters * calls))
    dist.barrier()
    return samples


def start_rpc(ctx: Context, timeout_s: float) -> None:
    """init_rpc as `w<rank>` at a port rank 0 picked, shared over the launch's group."""
    port: list[Any] = [free_ports(1)[0] if ctx.rank == 0 else None]
    dist.broadcast_object_list(port, src=0)
    addr = os.environ.get("MASTER_ADDR", "127.0.0.1")
    os.environ["TORCHELASTIC_USE_AGENT_STORE"] = "False"  # else a client of torchrun's store
    options = rpc.TensorPipeRpcBackendOptions(
        init_method=f"tcp://{addr}:{port[0]}", rpc_timeout=timeout_s
    )
    rpc.init_rpc(
        f"w{ctx.rank}", rank=ctx.rank, world_size=ctx.world_size, rpc_backend_options=options
    )


def run_rpc(spec: RunSpec, ctx: Context, log: Callable[[str], None]) -> None:
    """Every pattern at every size; rank 0 writes each measurement's rows as it ends."""
    workload: RpcSpec = spec.workload
    place = gather_placement(ctx)
    start_rpc(ctx, spec.launch.timeout_s)
    cases = list(itertools.product(workload.patterns, workload.sizes))
    ids = [measurement_id(ctx.world_size, index, workload.tag) for index in range(len(cases))]
    local: list[SampleRow] = []  # this rank's samples, kept at the end (--rank-samples)
    with run_sinks(spec.launch.run_dir, ResultRow, spec.launch.run_id, ctx.rank == 0) as sinks:
        try:
            for measurement, (pattern, requested) in zip(ids, cases, strict=True):
                if measurement in spec.launch.done:
                    continue
                count = requested // 4
                log(f"begin {measurement} rpc {pattern} size={count * 4}")
                mine = measure(ctx, workload, pattern, count)
                per_trial = workload.iters if pattern in LATENCY_PATTERNS else 1
                local += sample_rows(measurement, ctx.rank, mine, per_trial)  # none: ps's server
                worst = max_by_slot(ctx, mine, 0 if mine else -1, 1)[0]
                if sinks is not None:
                    host, callers = os.uname().nodename, ctx.world_size - (pattern == "ps")
                    row = rpc_row(spec, place, host, measurement, pattern, count, worst, callers)
                    write_measurement(sinks, row, worst, per_trial)
            save_rank_samples(ctx, local, spec.launch, ids)  # --rank-samples
        finally:
            rpc.shutdown()
