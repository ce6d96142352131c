"""Rank side of `distbench overlap`: per case, the compute alone, the collective alone and both at
once (ops.py), each timed with the comm loops' timers (timing.TRIALS).

    torchrun --nproc-per-node 2 -m distbench.worker RUN/spec.json    # the CLI starts it

Cases run with --compute-threads outermost (torch.set_num_threads on every rank), then
collective, size, compute size and mode. Per case: warm-up of every op, the compute's matmul
count (--compute-iters, or auto: as many as take about the collective's time alone, the largest
count over ranks), then `trials` rounds, each timing compute, comm and both one after the other
(after a barrier each, as every trial), so a drift of the machine's load reaches the three alike.
With --check, the collective's result is checked once after the timing, issued with the compute
running, as in `both`. The samples of every rank go to rank 0, which writes the case's row.
"""

from __future__ import annotations

import itertools
import math
import socket
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from distbench.collectors.rows_overlap import OverlapRow
from distbench.collectors.sink import run_sinks
from distbench.groups import gather_placement
from distbench.overlap.ops import SPANS, Collective, Matmul, Ops, build_collective
from distbench.overlap.rows import Case, write_case
from distbench.overlap.spec import OverlapSpec
from distbench.plan import measurement_id
from distbench.primitives.base import Context
from distbench.ranks import max_over_ranks, sum_over_ranks
from distbench.spec import RunSpec
from distbench.timing import TRIALS, trial_throughput, warm_up

CALIBRATION_OPS = 3
"""Ops timed (after the warm-up) to match the compute's length to the collective's."""


def choose_iters(ctx: Context, ops: Ops, single: Matmul, requested: int) -> int:
    """--compute-iters, or (0) the matmuls that take about the collective alone's time: the
    largest count over ranks, so every rank computes as long as the slowest needs."""
    if requested:
        return requested
    comm_us = trial_throughput(ctx, ops.run_comm, CALIBRATION_OPS)[0]
    warm_up(ctx, single, 1)  # the first matmul pays for the BLAS library's set-up
    matmul_us = trial_throughput(ctx, single, CALIBRATION_OPS)[0]
    wanted = max(1, round(comm_us / matmul_us)) if matmul_us > 0 else 1
    return int(max(max_over_ranks(ctx, [float(wanted)])))


def measure_case(
    ctx: Context, workload: OverlapSpec, ops: Ops, mode: str
) -> dict[str, list[float]]:
    """This rank's samples of every phase and span (us per op), trial by trial."""
    trial = TRIALS[mode]
    for run in (ops.run_compute, ops.run_comm, ops.run_both):
        warm_up(ctx, run, workload.warmup)
    ops.take_spans()  # the warm-up's and the calibration's
    mine: dict[str, list[float]] = {s: [] for s in ("compute", "comm", "both", *SPANS)}
    per_sample = workload.iters if mode == "throughput" else 1  # ops behind one sample
    for _ in range(workload.trials):
        mine["compute"] += trial(ctx, ops.run_compute, workload.iters)
        mine["comm"] += trial(ctx, ops.run_comm, workload.iters)
        mine["both"] += trial(ctx, ops.run_both, workload.iters)
        for name, spans in ops.take_spans().items():  # as the timers: a mean per sample
            mine[name] += [
                math.fsum(spans[k : k + per_sample]) / per_sample
                for k in range(0, len(spans), per_sample)
            ]
    return mine


def set_threads(threads: int) -> int:
    """torch.set_num_threads(threads) (0: as launched); the count now in force."""
    if threads:
        torch.set_num_threads(threads)
    return torch.get_num_threads()


def run_overlap(spec: RunSpec, ctx: Context, log: Callable[[str], None]) -> None:
    """Every case; rank 0 writes each case's row as it ends."""
    workload: OverlapSpec = spec.workload
    placement = gather_placement(ctx)
    cases = itertools.product(
        workload.compute_threads, workload.primitives, workload.sizes, workload.compute,
        workload.modes,
    )  # fmt: skip
    built: dict[tuple[str, int], Collective] = {}
    with run_sinks(spec.launch.run_dir, OverlapRow, spec.launch.run_id, ctx.rank == 0) as sinks:
        for index, (threads, name, requested, n, mode) in enumerate(cases):
            measurement = measurement_id(ctx.world_size, index, workload.tag)
            if measurement in spec.launch.done:  # --resume: its row is kept
                continue
            log(f"begin {measurement} overlap {name} size={requested} matmul={n} {mode}")
            in_force = set_threads(threads)
            collective = built.get((name, requested)) or build_collective(name, ctx, requested)
            built = {(name, requested): collective}  # one size's buffers at a time
            gathered, iters, wrong = run_case(ctx, workload, collective, n, mode)
            case = Case(
                measurement=measurement,
                collective=name,
                requested=requested,
                size_bytes=collective.size_bytes,
                count=collective.count,
                compute_n=n,
                compute_iters=iters,
                threads=in_force,
                mode=mode,
                wrong=wrong,
                gathered=gathered,
            )
            if sinks is not None:
                write_case(sinks, spec, placement, socket.gethostname(), case)


def run_case(
    ctx: Context, workload: OverlapSpec, collective: Collective, n: int, mode: str
) -> tuple[list[Any], int, int]:
    """(every rank's samples, matmuls per op, wrong elements over ranks or -1) of one case."""
    matmul = Matmul(n, 1, ctx.device)
    ops = Ops(ctx, collective, matmul)
    warm_up(ctx, ops.run_comm, workload.warmup)
    matmul.iters = choose_iters(ctx, ops, matmul, workload.compute_iters)
    mine = measure_case(ctx, workload, ops, mode)
    wrong = sum_over_ranks(ctx, ops.check()) if workload.check else -1
    gathered: list[Any] = [None] * ctx.world_size
    dist.all_gather_object(gathered, mine, group=ctx.group)
    return gathered, matmul.iters, wrong
