"""The communication sweep one launch runs: every primitive x dtype x mode x size of a CommSpec,
each measured, reduced over ranks and written by rank 0 before the next begins."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import torch

from distbench.collectors.schema import MAX_OVER_RANKS, ResultRow, SampleRow
from distbench.collectors.sink import RunSinks, run_sinks
from distbench.comm import graph, symmetric
from distbench.comm.api_cases import build_cases
from distbench.comm.dispatch import host_enqueue_us
from distbench.comm.interleave import Pending, build_plan, case_labels, run_rounds, stream
from distbench.comm.nccl_trace import NcclTrace, open_trace
from distbench.comm.precision import Trials, choose_iters, run_trials
from distbench.comm.rows import Measured, build_row, sample_rows
from distbench.comm.spec import GROUP, CommSpec
from distbench.comm.static import regular_buffers
from distbench.comm.window import run_grouped
from distbench.groups import gather_placement
from distbench.primitives import get_primitive
from distbench.primitives.base import Case, CaseRequest, Context
from distbench.ranks import save_rank_samples, sum_over_ranks
from distbench.spec import RunSpec, measurement_id
from distbench.timing import TRIALS, warm_up


class WrongResults(RuntimeError):
    """--check found wrong elements: the run stops, the row that shows them is written."""


def measure(
    ctx: Context, case: Case, workload: CommSpec, mode: str, trace: NcclTrace, measurement: str
) -> Measured:
    """One case's trials. The warm-up (and the graph's capture) are the case's window of the NCCL
    log under --nccl-trace: its own calls, none of the harness's."""
    trial = TRIALS[mode]
    with trace.window(measurement):
        warm_up(ctx, case.run, workload.warmup)
    iters = workload.iters
    if workload.iters_auto:
        iters = choose_iters(ctx, case.run, trial, workload.trial_time_ms / 1e3)
    if workload.cuda_graph:  # --cuda-graph N: N replays of a graph of `iters` ops per trial
        with trace.window(measurement):
            trial, enqueue_us = graph.replay_trial(ctx, case, iters, workload.cuda_graph)
    else:
        enqueue_us = host_enqueue_us(ctx, case.run, case.ops_per_run)
    trials = run_trials(ctx, case.run, trial, iters, workload, case.ops_per_run)
    wrong = sum_over_ranks(ctx, case.check()) if workload.check else -1
    return Measured(case, mode, iters, trials, wrong, enqueue_us)


class Item(NamedTuple):
    """One point of the sweep's plan: a size of one primitive, api, dtype and mode."""

    primitive: str
    api: str
    dtype: str
    mode: str
    requested: int


def plan_items(workload: CommSpec) -> Iterator[Item]:
    """The sweep's points in its fixed order: measurement ids (`ws<N>/i<k>`) number the cases in
    this order, which is what --resume relies on (with one api, as before --api took a list)."""
    for primitive in workload.primitives:
        for api in workload.api:
            for dtype in workload.dtypes:
                for mode in workload.modes:
                    for requested in workload.sizes:
                        yield Item(primitive, api, dtype, mode, requested)


def run_comm(spec: RunSpec, ctx: Context, log: Callable[[str], None]) -> None:
    """Measure the whole sweep on this rank; rank 0 writes rows as each measurement finishes."""
    with run_sinks(spec.launch.run_dir, ResultRow, spec.launch.run_id, ctx.rank == 0) as sinks:
        run_sweep(spec, ctx, log, sinks)


def run_sweep(
    spec: RunSpec, ctx: Context, log: Callable[[str], None], sinks: RunSinks | None
) -> None:
    """run_comm's body: the sweep, its rows written to `sinks` (rank 0's; None elsewhere)."""
    workload: CommSpec = spec.workload
    run_dir = Path(spec.launch.run_dir)
    placement = gather_placement(ctx, run_dir)
    trace = open_trace(workload.nccl_trace, run_dir)  # --nccl-trace: NCCL's choice per row
    local: list[SampleRow] = []  # this rank's raw samples, kept at the end (--rank-samples)
    done = set(spec.launch.done)  # a resumed run skips the measurements it already has
    if workload.buffers == "symmetric":
        symmetric.probe(ctx)  # Unsupported (one line) before the first row where it cannot run

    def record(
        measurement: str, primitive: str, dtype_name: str, requested: int, result: Measured
    ) -> None:
        """Keep this rank's samples; rank 0 writes the row (samples first: the row commits the
        measurement for --resume); stop on wrong results."""
        run = result.trials
        rank = ctx.global_ranks[ctx.rank]
        local.extend(sample_rows(measurement, rank, result.mode, run.trials_run, run.local_us))
        begin = time.perf_counter_ns()
        if sinks is not None:
            row = build_row(
                spec, ctx, placement, measurement, primitive, dtype_name, requested, result
            )
            worst = sample_rows(
                measurement, MAX_OVER_RANKS, result.mode, run.trials_run, run.max_us
            )
            sinks.write(worst, trace.fill(row))
        write_us = (time.perf_counter_ns() - begin) / 1e3
        log(
            f"end {measurement} iters={result.iters} trials={run.trials_run} "
            f"converged={run.converged} aggregate_us={run.aggregate_us:.0f} write_us={write_us:.0f}"
        )
        if result.wrong > 0:
            raise WrongResults(
                f"--check found {result.wrong} wrong elements in {primitive} "
                f"{dtype_name} size={result.case.size_bytes} ({measurement})"
            )

    if workload.trial_order in ("grouped", "interleaved"):
        run_interleaved(ctx, workload, done, log, record, trace)
    else:
        run_sequential(ctx, workload, done, log, record, trace)
    begin = time.perf_counter_ns()
    sent = save_rank_samples(ctx, local, spec.launch)  # --rank-samples
    keep_us = (time.perf_counter_ns() - begin) / 1e3
    log(
        f"rank samples ({spec.launch.rank_samples}): {len(local)} rows, {sent} bytes sent, "
        f"{keep_us:.0f} us"
    )


Log = Callable[[str], None]
Record = Callable[[str, str, str, int, Measured], None]
"""(measurement, primitive, dtype, requested bytes, result): run_comm's writer of one row."""


def planned_ids(ctx: Context, workload: CommSpec) -> Iterator[tuple[Item, list[str]]]:
    """plan_items with the measurement ids of each item's cases (numbered in plan order)."""
    index = 0
    for item in plan_items(workload):
        count = get_primitive(item.primitive).case_count(
            ctx.world_size, workload.root, workload.options
        )
        yield item, [measurement_id(ctx.world_size, index + j, workload.tag) for j in range(count)]
        index += count


def run_sequential(
    ctx: Context, workload: CommSpec, done: set[str], log: Log, record: Record, trace: NcclTrace
) -> None:
    """Every trial of one measurement back to back, then the next (--order sequential)."""
    for (primitive, api, dtype_name, mode, requested), ids in planned_ids(ctx, workload):
        if done.issuperset(ids):
            continue  # finished before an interruption: allocate nothing
        dtype = getattr(torch, dtype_name)
        request = CaseRequest(requested, dtype, workload.op, workload.root, workload.options, api)
        cases = build_timed_cases(ctx, primitive, request, workload)
        for measurement, case in zip(ids, cases, strict=True):
            if measurement in done:
                continue
            what = f"{primitive} {dtype_name} {mode} size={case.size_bytes}{case_labels(case)}"
            log(f"begin {measurement} {what}")
            result = measure(ctx, case, workload, mode, trace, measurement)
            record(measurement, primitive, dtype_name, requested, replace(result, api=api))
        del cases  # free this size's buffers before the next is allocated


def build_timed_cases(
    ctx: Context, primitive: str, request: CaseRequest, workload: CommSpec
) -> list[Case]:
    """The cases of one size: on symmetric memory (--buffers symmetric) or --api's; checked by
    replaying a captured op under --cuda-graph (the CLI allows both with --order sequential)."""
    on_symmetric = workload.buffers == "symmetric"
    cases = (symmetric.build_cases if on_symmetric else build_cases)(ctx, primitive, request)
    if workload.cuda_graph:
        alloc = symmetric.allocator(ctx) if on_symmetric else regular_buffers(ctx)
        cases = graph.with_replayed_checks(ctx, primitive, request, cases, alloc)
    return cases


def run_interleaved(
    ctx: Context, workload: CommSpec, done: set[str], log: Log, record: Record, trace: NcclTrace
) -> None:
    """Trial t of every measurement in round t (--order interleaved), or of every measurement of
    a group of GROUP, group after group (--order grouped; comm/interleave.py)."""
    items = list(planned_ids(ctx, workload))

    def finish(pending: Pending, case: Case, trials: Trials, wrong: int) -> None:
        api = pending.request.api
        result = Measured(case, pending.mode, pending.iters, trials, wrong, pending.enqueue_us, api)
        record(
            pending.measurement,
            pending.primitive,
            pending.dtype,
            pending.request.requested_bytes,
            result,
        )

    if workload.trial_order == "grouped":
        run_grouped(ctx, workload, stream(ctx, workload, items, done), GROUP, log, finish,
                    trace.window)  # fmt: skip
    else:
        run_rounds(ctx, workload, build_plan(ctx, workload, items, done), log, finish, trace.window)
