"""How many ops per trial and how many trials one measurement takes: fixed (--iters N, --trials)
or chosen while it runs (--iters auto, --precision).

Every rank must run the same number of ops of every collective, or the group deadlocks (the
pitfall of pytest-benchmark's per-process calibration: docs/method.md, "Every rank runs the same
operations"). So every choice is taken from numbers that every rank holds bit for bit (a maximum
over ranks), or rank 0 takes it and broadcasts it. All of it happens between trials, outside
every timed region.

--iters auto (OSU lowers its iteration count for large messages; this does it by time): probe
trials of 1, 4, 16 ... ops with the mode's own trial and clock, until the slowest rank's probe
holds PROBE_SHARE of --trial-time in ops. A probe that reaches it is run once more and the faster
of the two kept: a stall only lengthens a probe (on a busy box one stall in a short probe made a
1K op look 100x slow and gave it fewer ops than a 4M one), and if the repeat falls short, probing
goes on. Then iters = ops x trial_time / probe time. So a trial holds about --trial-time of op
time: exactly the trial in throughput mode; in latency mode each op also waits for its barrier,
which the trial adds. The probes run after the warm-up and are not samples.

--precision P: after the first --trials trials, one trial at a time until the p50 is known within
+-P, or --max-trials trials have run, or --budget seconds have passed since the first timed
trial. Known within +-P (stats/stopping.py converged): with several samples a trial (latency
mode), when the p50's 95 % confidence sequence over trials is within +-P at any trial (it holds
at every trial at once, so it holds at a stop chosen by looking; the row prints it as ci_low_us,
ci_high_us); with one sample a trial, when the 99 % interval is within +-P at CONFIRM_LOOKS
consecutive looks (after trial MIN_TRIALS, then every LOOK_EVERY: 10, 12, 14 ...), the row
printing its 95 % one. Over trials, not ops (stats/intervals.py), so in latency mode a trial of
20 ops counts once. Stopping at the first narrow interval picks trials that happened to agree
(optional stopping): the sequence is valid at any stop, and the one-sample rule's two guards (the
look at 99 %, three looks) keep a converged row's p50 within +-P of the truth at 95 %. Rank 0
decides on the max-over-ranks samples and broadcasts (stop, converged).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.distributed as dist

from distbench.comm.spec import CommSpec
from distbench.primitives.base import Context
from distbench.ranks import max_over_ranks, reduce_device
from distbench.stats import Stats
from distbench.stats.stopping import converged as precision_reached

Trial = Callable[[Context, Callable[[], None], int], list[float]]
"""timing.TRIALS' functions: (ctx, op, iters) -> this rank's samples of one trial (us)."""

MAX_AUTO_ITERS = 100_000
"""--iters auto never picks more (a 1-byte op on a fast GPU would ask for millions)."""
PROBE_SHARE = 0.2
"""A probe that lasts this share of --trial-time is long enough to scale from."""


def choose_iters(ctx: Context, run: Callable[[], None], trial: Trial, trial_time_s: float) -> int:
    """Ops per trial so that a trial lasts about `trial_time_s` (module docstring); the same
    on every rank, because it is computed from the maximum over ranks of each probe."""
    ops = 1
    while True:
        busy_s = _probe_s(ctx, run, trial, ops)
        if busy_s >= trial_time_s * PROBE_SHARE:
            busy_s = min(busy_s, _probe_s(ctx, run, trial, ops))  # the faster of two
        if busy_s >= trial_time_s * PROBE_SHARE or ops >= MAX_AUTO_ITERS:
            return max(1, min(MAX_AUTO_ITERS, round(ops * trial_time_s / busy_s)))
        ops = min(ops * 4, MAX_AUTO_ITERS)  # short, or the long one was a stall: probe on


def _probe_s(ctx: Context, run: Callable[[], None], trial: Trial, ops: int) -> float:
    """One probe trial of `ops` ops: the slowest rank's time in ops (s), the same on every rank."""
    samples = trial(ctx, run, ops)  # throughput: [mean per op]; latency: one per op
    busy_s = sum(samples) / len(samples) * ops / 1e6
    return max(max_over_ranks(ctx, [busy_s])[0], 1e-9)


@dataclass(frozen=True)
class Trials:
    """One measurement's samples and how they were taken."""

    local_us: list[float]
    """This rank's samples, trial-major (per message: already divided by ops_per_run)."""
    max_us: list[float]
    """Per-sample maximum over ranks (identical on every rank)."""
    trials_run: int
    converged: bool | None
    """Whether the precision was met; None without --precision."""
    aggregate_us: float
    """Harness time of the cross-rank reductions and decisions (outside the timed region)."""


def decide(
    ctx: Context,
    max_us: list[float],
    trials_run: int,
    began: float,
    spec: CommSpec,
    widths: list[float],
) -> tuple[bool, bool]:
    """(stop, converged): rank 0's decision on its samples, clock and limits, broadcast so that
    every rank takes it. Rank 0 keeps the one-sample rule's half-width after each trial in
    `widths` (stopping.converged)."""
    flags = [0.0, 0.0]
    if ctx.rank == 0:
        samples = Stats(tuple(max_us), trials_run, looked=True)
        converged = precision_reached(samples, widths, spec.precision)
        spent = time.perf_counter() - began >= spec.budget_s
        flags = [float(converged or spent or trials_run >= spec.max_trials), float(converged)]
    tensor = torch.tensor(flags, dtype=torch.float64, device=reduce_device(ctx))  # [stop, conv]
    dist.broadcast(tensor, src=ctx.global_ranks[0], group=ctx.group)
    stop, converged_flag = tensor.cpu().tolist()
    return bool(stop), bool(converged_flag)


def run_trials(
    ctx: Context, run: Callable[[], None], trial: Trial, iters: int, spec: CommSpec, ops: int
) -> Trials:
    """The measurement's trials: `spec.trials` of them, or (with spec.precision) as many as the
    precision, --max-trials and --budget allow. `ops`: messages per run() (ping-pong, windows)."""
    first = min(spec.trials, spec.max_trials) if spec.precision else spec.trials
    local: list[float] = []
    maxed: list[float] = []
    harness_ns = 0
    began = time.perf_counter()
    trials_run, converged = 0, None
    widths: list[float] = []  # rank 0's half-width after each trial (decide)
    while True:
        batch = first if trials_run == 0 else 1
        new = [t / ops for _ in range(batch) for t in trial(ctx, run, iters)]
        trials_run += batch
        local += new
        mark = time.perf_counter_ns()
        if not spec.precision:
            maxed = max_over_ranks(ctx, local)  # once, after the last trial
            harness_ns += time.perf_counter_ns() - mark
            break
        maxed += max_over_ranks(ctx, new)
        stop, converged = decide(ctx, maxed, trials_run, began, spec, widths)
        harness_ns += time.perf_counter_ns() - mark
        if stop:
            break
    return Trials(local, maxed, trials_run, converged, harness_ns / 1e3)
