"""Rank side of `distbench overlap`: per case, the compute alone, the collective alone and both at
once (ops.py), each timed with the comm loops' timers (timing.TRIALS).

    torchrun --nproc-per-node 2 -m distbench.worker RUN/spec.json    # the CLI starts it

Cases run with --compute-threads outermost (torch.set_num_threads on every rank), then
collective, size, compute size and mode. Per case: warm-up of every op, the compute's matmul
count (--compute-iters, or auto: as many as take about the collective's time alone, the largest
count over ranks), then `trials` rounds, each timing compute, comm and both one after the other
(after a barrier each, as every trial), so a drift of the machine's load reaches the three alike.
With --check, the collective's result is checked once after the timing, issued with the compute
running, as in `both`. The per-sample maximum over ranks of every series (one tensor all_reduce)
reaches every rank; rank 0 writes the case's row and the `both` maxima (rank -1) to samples.csv.
Each rank keeps its own `both` samples for --rank-samples, written at the end (bench/ranks.py).
"""

from __future__ import annotations

import itertools
import math
import socket
from collections.abc import Callable

import torch

from distbench.collectors.rows_overlap import OverlapRow
from distbench.collectors.schema import SampleRow
from distbench.collectors.sink import run_sinks
from distbench.groups import gather_placement
from distbench.overlap.ops import SPANS, Collective, Matmul, Ops, build_collective
from distbench.overlap.rows import SERIES, Case, write_case
from distbench.overlap.spec import OverlapSpec
from distbench.pairs.rows import sample_rows
from distbench.primitives.base import Context
from distbench.ranks import max_over_ranks, save_rank_samples, sum_over_ranks
from distbench.spec import RunSpec, measurement_id
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
    local: list[SampleRow] = []  # this rank's `both` samples, kept at the end (--rank-samples)
    rank = ctx.global_ranks[ctx.rank] if ctx.global_ranks else ctx.rank
    with run_sinks(spec.launch.run_dir, OverlapRow, spec.launch.run_id, ctx.rank == 0) as sinks:
        for index, (threads, name, requested, n, mode) in enumerate(cases):
            measurement = measurement_id(ctx.world_size, index, workload.tag)
            if measurement in spec.launch.done:  # --resume: its row is kept
                continue
            log(f"begin {measurement} overlap {name} size={requested} matmul={n} {mode}")
            in_force = set_threads(threads)
            collective = built.get((name, requested)) or build_collective(name, ctx, requested)
            built = {(name, requested): collective}  # one size's buffers at a time
            mine, worst, iters, wrong = run_case(ctx, workload, collective, n, mode)
            local += sample_rows(measurement, rank, mode, workload.iters, mine["both"])
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
                world_size=ctx.world_size,
                worst=worst,
            )
            if sinks is not None:
                write_case(sinks, spec, placement, socket.gethostname(), case)
    save_rank_samples(ctx, local, spec.launch)  # --rank-samples


def run_case(
    ctx: Context, workload: OverlapSpec, collective: Collective, n: int, mode: str
) -> tuple[dict[str, list[float]], dict[str, list[float]], int, int]:
    """(this rank's samples, their per-sample maximum over ranks, matmuls per op, wrong elements
    over ranks or -1) of one case, samples by series."""
    matmul = Matmul(n, 1, ctx.device)
    ops = Ops(ctx, collective, matmul)
    warm_up(ctx, ops.run_comm, workload.warmup)
    matmul.iters = choose_iters(ctx, ops, matmul, workload.compute_iters)
    mine = measure_case(ctx, workload, ops, mode)
    wrong = sum_over_ranks(ctx, ops.check()) if workload.check else -1
    return mine, worst_of(ctx, mine), matmul.iters, wrong


def worst_of(ctx: Context, mine: dict[str, list[float]]) -> dict[str, list[float]]:
    """Every series' per-sample maximum over ranks, in one all_reduce of the series end to end
    (every rank has as many samples of each)."""
    joined = max_over_ranks(ctx, [value for series in SERIES for value in mine[series]])
    worst, start = {}, 0
    for series in SERIES:
        worst[series] = joined[start : start + len(mine[series])]
        start += len(mine[series])
    return worst
