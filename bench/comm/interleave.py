"""--order interleaved: trial t of every measurement of a launch runs in round t; --order
grouped: the same over each group of GROUP consecutive measurements, group after group (the
default in latency mode).

    distbench sweep --config ci/sweep-nightly-cpu.toml     # order = "interleaved" there
    distbench allreduce --mode latency                     # grouped

Sequential order runs all trials of one measurement back to back, so a load burst on a shared box
(another job, a compaction) lands on the few measurements running at that moment, and all of a
primitive's rows sit in the same seconds: they move together from launch to launch. Interleaved,
each measurement's trials are spread over the whole launch; a burst costs every row one trial,
and the row's statistic (e.g. its fastest trial) skips it. 0.2.0's ci/bench_gate.py measured
the result (CHANGELOG 0.2.0); ci/bench_stats.py replays the gate on such launches now.

Every case is allocated and warmed up first (--warmup ops; --iters auto chooses its ops then).
Then `trials` rounds visit every case in plan order: one untimed op (its buffers back in cache
after the other cases ran), then one trial. A case's row is written right after its last trial,
so rows land during the last round (--resume keeps them as in sequential order). Cases of at most
KEEP_BYTES stay allocated for the whole launch; larger ones are built again at each visit,
outside the timed region, and freed after it.

Grouped, the same runs over GROUP measurements at a time (comm/spec.py): their rows land in the
group's last round, so a crash loses at most the group in flight, and only the group's buffers (and
an item's other cases, built with it) are allocated. A row's consecutive trials are GROUP visits
apart rather than back to back: on a machine whose speed drifts over seconds (this project's 2-core
box: runs of ~5 alike trials), trials back to back look alike, and a latency row's p50 interval over
them held the truth 89-93 % of the time at 12 trials, against 95-98 % with three measurements
interleaved; grouped, recorded after the choice, 95-96 % (docs/measurement.md).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import torch

from distbench.comm.api_cases import build_cases
from distbench.comm.dispatch import host_enqueue_us
from distbench.comm.precision import Trials, choose_iters
from distbench.comm.spec import CommSpec
from distbench.primitives.base import Case, CaseRequest, Context
from distbench.ranks import max_over_ranks, sum_over_ranks
from distbench.timing import TRIALS, drain, warm_up

KEEP_BYTES = 64 << 20
"""Requested sizes up to this keep their buffers allocated across rounds."""


@dataclass
class Pending:
    """One measurement of the launch waiting for its trials."""

    measurement: str
    primitive: str
    dtype: str
    mode: str
    request: CaseRequest
    index: int
    """Which of build_cases' cases this is (root=all, send/recv patterns)."""
    case: Case | None
    """Kept across rounds (None: rebuilt at each visit)."""
    size_bytes: int
    iters: int = 0
    local_us: list[float] | None = None
    enqueue_us: float = math.nan
    """The host's time to issue one op (comm/dispatch.py), measured after the warm-up."""
    labels: str = ""
    """Its case's labels for the begin line (case_labels), kept from the warm-up: a case above
    KEEP_BYTES is not built between visits."""


Finish = Callable[[Pending, Case, Trials, int], None]
"""Called on every rank after a case's last trial: (pending, its case, trials, wrong)."""
Window = Callable[[str], AbstractContextManager[None]]
"""NcclTrace.window: the calls inside are the measurement's own (--nccl-trace)."""


def no_window(measurement: str) -> AbstractContextManager[None]:
    return nullcontext()


def prepare(ctx: Context, workload: CommSpec, plan: list[Pending], window: Window) -> None:
    """Warm every case up (inside its trace window) and fix its ops per trial; free the ones not
    kept."""
    for pending in plan:
        case = case_of(ctx, pending)
        pending.labels = case_labels(case)
        with window(pending.measurement):
            warm_up(ctx, case.run, workload.warmup)
        pending.enqueue_us = host_enqueue_us(ctx, case.run, case.ops_per_run)
        pending.iters = workload.iters
        if workload.iters_auto:
            trial = TRIALS[pending.mode]
            pending.iters = choose_iters(ctx, case.run, trial, workload.trial_time_ms / 1e3)
        pending.local_us = []


def case_of(ctx: Context, pending: Pending) -> Case:
    if pending.case is not None:
        return pending.case
    return build_cases(ctx, pending.primitive, pending.request)[pending.index]


def run_rounds(
    ctx: Context,
    workload: CommSpec,
    plan: list[Pending],
    log: Callable[[str], None],
    finish: Finish,
    window: Window = no_window,
) -> None:
    """`workload.trials` rounds over `plan`; `finish` each case after its last trial."""
    prepare(ctx, workload, plan, window)
    rounds = workload.trials
    for round_index in range(rounds):
        log(f"round {round_index + 1} of {rounds} over {len(plan)} measurements")
        last = round_index == rounds - 1
        for pending in plan:
            case = case_of(ctx, pending)
            if last:  # the progress display shows the measurement whose row lands next
                log(begin_line(pending, case))
            visit(ctx, pending, case)
            if last:
                mark = time.perf_counter_ns()
                maxed = max_over_ranks(ctx, pending.local_us)
                aggregate_us = (time.perf_counter_ns() - mark) / 1e3
                trials = Trials(pending.local_us, maxed, rounds, None, aggregate_us)
                wrong = sum_over_ranks(ctx, case.check()) if workload.check else -1
                finish(pending, case, trials, wrong)
                pending.case = None  # its buffers go once the row is written
            del case


def begin_line(pending: Pending, case: Case | None = None) -> str:
    """The log's `begin` line of a measurement (launch/progress.py reads it), with the labels
    of its case (case_labels: of the case given, else of the one built, else those kept from
    its warm-up)."""
    built = case or pending.case
    labels = case_labels(built) if built is not None else pending.labels
    return (
        f"begin {pending.measurement} {pending.primitive} {pending.dtype} {pending.mode} "
        f"size={pending.size_bytes}{labels}"
    )


def case_labels(case: Case) -> str:
    """` pattern=pingpong src=0 dst=3`: what tells the cases of one size apart (a sendrecv
    --pairs all measures every ordered pair at each size), for the begin line."""
    return "".join(f" {key}={value}" for key, value in case.labels.items() if value != "")


def visit(ctx: Context, pending: Pending, case: Case) -> list[float]:
    """One visit of a measurement between others': an untimed op (its buffers back in cache
    after the others ran), then one trial, kept in `pending.local_us`; its samples per message."""
    case.run()
    drain(ctx.device)
    samples = TRIALS[pending.mode](ctx, case.run, pending.iters)
    new = [t / case.ops_per_run for t in samples]
    assert pending.local_us is not None
    pending.local_us += new
    return new


def stream(
    ctx: Context, workload: CommSpec, items: list[tuple[Any, list[str]]], done: set[str]
) -> Iterator[Pending]:
    """build_plan, one item at a time: an item's cases are built when the plan reaches it."""
    for item in items:
        yield from build_plan(ctx, workload, [item], done)


def build_plan(
    ctx: Context,
    workload: CommSpec,
    items: list[tuple[Any, list[str]]],
    done: set[str],
) -> list[Pending]:
    """Every measurement not yet done, in plan order: items are (runner.Item: primitive, api,
    dtype, mode, requested bytes; the ids of its cases)."""
    plan = []
    for (primitive, api, dtype_name, mode, requested), ids in items:
        if done.issuperset(ids):
            continue
        dtype = getattr(torch, dtype_name)
        request = CaseRequest(requested, dtype, workload.op, workload.root, workload.options, api)
        cases = build_cases(ctx, primitive, request)
        keep = requested <= KEEP_BYTES
        for index, (measurement, case) in enumerate(zip(ids, cases, strict=True)):
            if measurement not in done:
                kept = case if keep else None
                what = (measurement, primitive, dtype_name, mode, request, index)
                plan.append(Pending(*what, kept, case.size_bytes))
        del cases
    return plan
