"""--order grouped (latency mode's default): run_rounds over each GROUP consecutive measurements;
with --precision, a window of GROUP measurements in flight, each given one trial a round, each
leaving when stats/stopping.py's rule (or --max-trials, or --budget) stops it; its row lands
then, and the next measurement of the plan takes its place.

    distbench allreduce --mode latency --precision 5%

Sequential --precision runs a measurement's trials back to back, and on a machine whose speed
drifts over seconds the trials of one stretch look alike: the confidence sequence assumes
exchangeable trials. Resampled in their recorded order (runs of ~5; ci/bench_stats_intervals.py,
docs/measurement.md), the latency launches recorded after grouped became the default gave
converged rows off the truth by more than 10 % in 2.9-3.1 % sequentially and 0.7-2.7 % grouped,
and every row's printed 95 % interval held the truth in 94.5-96.8 % against 96.3-99.0 %. A
window that stays full keeps a row's trials GROUP visits apart until it stops, which groups that
emptied as their rows converged would not.

Every rank runs the same trials of the same measurements: each stop is rank 0's decision,
broadcast (comm/precision.py decide). --budget counts a measurement's own trials (its untimed op
and its trial), not its neighbours'. A crash loses the measurements in flight, at most GROUP.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from distbench.comm.interleave import (
    Finish,
    Pending,
    Window,
    begin_line,
    case_of,
    no_window,
    prepare,
    run_rounds,
    visit,
)
from distbench.comm.precision import Trials, decide
from distbench.comm.spec import CommSpec
from distbench.primitives.base import Case, Context
from distbench.ranks import max_over_ranks, sum_over_ranks


@dataclass
class Slot:
    """One measurement in the window."""

    pending: Pending
    trials_run: int = 0
    own_s: float = 0.0
    """Seconds of its own untimed ops and trials (what --budget counts)."""
    maxed: list[float] = field(default_factory=list)
    widths: list[float] = field(default_factory=list)
    """Rank 0's half-widths, one a look (stopping.converged)."""
    converged: bool = False
    harness_ns: int = 0
    case: Case | None = None
    """Its case from the trial that stopped it (rebuilt at each visit above KEEP_BYTES)."""


def run_grouped(
    ctx: Context,
    workload: CommSpec,
    plan: Iterable[Pending],
    size: int,
    log: Callable[[str], None],
    finish: Finish,
    window: Window = no_window,
) -> None:
    """--order grouped over `plan` (a lazy plan, interleave.stream: a group's cases are built as
    its items are reached, each once, as in sequential order, a compiled --api's compile
    included): with --precision, up to `size` measurements in flight (module docstring), each
    finished as it stops; else run_rounds over each `size` consecutive measurements."""
    if not workload.precision:
        group: list[Pending] = []
        for pending in plan:
            group.append(pending)
            if len(group) == size:
                run_rounds(ctx, workload, group, log, finish, window)
                group = []
        if group:
            run_rounds(ctx, workload, group, log, finish, window)
        return
    source: Iterator[Pending] = iter(plan)
    first = min(workload.trials, workload.max_trials)
    active: list[Slot] = []
    while True:
        while len(active) < size and (entering := next(source, None)) is not None:
            prepare(ctx, workload, [entering], window)
            log(begin_line(entering))
            active.append(Slot(entering))
        if not active:
            return
        log(f"round over {len(active)} measurements")
        for slot in list(active):
            if one_trial(ctx, workload, slot, first):
                stop(ctx, workload, slot, finish)
                active.remove(slot)


def one_trial(ctx: Context, workload: CommSpec, slot: Slot, first: int) -> bool:
    """The slot's next trial (after its untimed op: its buffers back in cache); whether it
    stops now (from its `first` trials on, rank 0's decision, broadcast: comm/precision.py)."""
    case = case_of(ctx, slot.pending)  # built again at each visit above KEEP_BYTES (build_plan)
    began = time.perf_counter()
    new = visit(ctx, slot.pending, case)
    slot.own_s += time.perf_counter() - began
    slot.trials_run += 1
    mark = time.perf_counter_ns()
    slot.maxed += max_over_ranks(ctx, new)
    stopped = False
    if slot.trials_run >= first:
        since = time.perf_counter() - slot.own_s  # --budget: its own time, not the window's
        stopped, slot.converged = decide(
            ctx, slot.maxed, slot.trials_run, since, workload, slot.widths
        )
    slot.harness_ns += time.perf_counter_ns() - mark
    if stopped:
        slot.case = case  # stop() checks it and hands it to the row
    return stopped


def stop(ctx: Context, workload: CommSpec, slot: Slot, finish: Finish) -> None:
    """The slot's row: its trials, whether the precision was met, its check."""
    pending, case = slot.pending, slot.case
    assert case is not None and pending.local_us is not None
    trials = Trials(pending.local_us, slot.maxed, slot.trials_run, slot.converged,
                    slot.harness_ns / 1e3)  # fmt: skip
    wrong = sum_over_ranks(ctx, case.check()) if workload.check else -1
    finish(pending, case, trials, wrong)
    pending.case = slot.case = None  # its buffers go once the row is written
