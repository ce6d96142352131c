"""One rank = one stage of `distbench pipeline`: train the split model under each strategy and
number of microbatches, timing whole steps in windows between barriers as ddp does.

    distbench pipeline --backend gloo --world-sizes 2,3 --microbatches 1,4

(the CLI launches torchrun, which runs this through distbench.worker). Per measurement: the
stage freshly cut from the seeded model, the same global batches on every rank, `warmup` untimed
steps, then `steps` timed ones (zero_grad, the schedule's forwards and backwards, SGD step). A
window's step time is the slowest rank's window / steps; each stage's busy time inside the window
(stages.Busy: its forwards, backwards, zero_grad and optimizer step) gives its idle share, and the
window's bubble is the mean of those over stages. The row's bubble is the mean over windows,
bubble_p50 their median (window_bubbles). Afterwards every rank compares its stage's parameters
with a single-process run of the whole model on the same batches (max_param_diff). Rank 0 writes
the rows.
"""

from __future__ import annotations

import gc
import statistics
from collections.abc import Callable

import torch
import torch.distributed as dist
from torch import nn

from distbench.collectors.rows_pipeline import PipelineRow
from distbench.ddp.models import build_batches, build_model
from distbench.ddp.rows import rank0_sinks, window_rows
from distbench.ddp.steps import Batch
from distbench.pipeline.rows import Measured, build_row
from distbench.pipeline.schedules import build_step
from distbench.pipeline.spec import PipelineSpec
from distbench.pipeline.stages import Busy, build_stage, build_units, stage_bounds
from distbench.primitives.base import Context
from distbench.ranks import max_over_ranks, reduce_device
from distbench.spec import RunSpec, measurement_id
from distbench.timing import Clock, barrier, drain


def flat(module: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in module.parameters()]).clone()


def reference_stage(spec: PipelineSpec, ctx: Context, batches: list[Batch]) -> torch.Tensor:
    """This stage's parameters after a single-process run of the whole model on the same global
    batches (plain SGD, cross-entropy mean over the global batch)."""
    model = build_model(spec.model_spec(), ctx.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=spec.lr)
    loss_fn = nn.CrossEntropyLoss()
    for x, y in batches:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
    first, end = stage_bounds(spec, ctx.world_size)[ctx.rank]
    return flat(nn.Sequential(*build_units(model, spec.model)[first:end]))


def sum_over_ranks(ctx: Context, values: list[float]) -> list[float]:
    tensor = torch.tensor(values, dtype=torch.float64, device=reduce_device(ctx))
    dist.all_reduce(tensor, group=ctx.group)
    return [float(v) for v in tensor.cpu().tolist()]


def window_bubbles(idle_sums: list[float], world_size: int) -> tuple[float, float]:
    """(mean, median) over windows of the window's bubble, from each window's idle shares summed
    over the stages. The median is robust to the few windows that other load disturbed (they
    stretch a stage's wait and pull the mean up), and unlike the least idle window (bubble_min
    up to v3, the minimum of noisy windows: low by ~1.5 standard deviations at 10 windows) it is
    not biased low."""
    bubbles = [total / world_size for total in idle_sums]
    return statistics.fmean(bubbles), statistics.median(bubbles)


def measure(
    strategy: str, microbatches: int, spec: PipelineSpec, ctx: Context, batches: list[Batch]
) -> tuple[Measured, torch.Tensor]:
    """Train one strategy at M microbatches; its measurement and this stage's final parameters."""
    stage = build_stage(spec, ctx.rank, ctx.world_size, ctx.device)
    meter = Busy(stage, ctx.rank == 0, ctx.rank == ctx.world_size - 1, ctx.device)
    step, schedule = build_step(strategy, meter, ctx, microbatches, spec.width)
    optimizer = torch.optim.SGD(stage.parameters(), lr=spec.lr)
    window = spec.window_length()
    window_us: list[float] = []
    busy_us: list[float] = []
    sent = 0
    for index, (x, y) in enumerate(batches):
        timed = index >= spec.warmup
        if timed and (index - spec.warmup) % window == 0:
            drain(ctx.device)
            barrier(ctx)  # every stage starts the window together, outside the clock
            busy_before, sent_before = meter.busy_us, meter.sent_bytes
            clock = Clock(ctx.device)
            clock.mark()
        meter.begin()  # the optimizer's work is the stage's too: busy, not bubble
        optimizer.zero_grad()
        meter.end()
        step(x, y)
        meter.begin()
        optimizer.step()
        meter.end()
        if timed and (index - spec.warmup + 1) % window == 0:
            clock.mark()
            drain(ctx.device)
            window_us.append(clock.elapsed_us())
            busy_us.append(meter.busy_us - busy_before)
            sent += meter.sent_bytes - sent_before
    drain(ctx.device)
    slowest = max_over_ranks(ctx, window_us)
    idle = [1.0 - b / w if w > 0 else float("nan") for b, w in zip(busy_us, slowest, strict=True)]
    idle_sum = sum_over_ranks(ctx, [*idle, float(sent)])
    final = flat(stage)
    del schedule, step, meter, optimizer
    gc.collect()
    bubble, bubble_p50 = window_bubbles(idle_sum[:-1], ctx.world_size)
    measured = Measured(
        strategy=strategy,
        microbatches=microbatches,
        window_steps=window,
        max_window_us=slowest,
        bubble=bubble,
        bubble_p50=bubble_p50,
        sent_bytes=round(idle_sum[-1]),
        max_param_diff=float("nan"),
    )
    return measured, final


def run_pipeline(spec: RunSpec, ctx: Context, log: Callable[[str], None]) -> None:
    """Measure every (strategy, M) of the spec on this rank (stage); rank 0 writes the rows."""
    workload: PipelineSpec = spec.workload
    workload.check_world_size(ctx.world_size)
    runs = workload.runs(ctx.world_size)
    ids = [measurement_id(ctx.world_size, i, workload.tag) for i in range(len(runs))]
    done = set(spec.launch.done)
    with rank0_sinks(spec, ctx, PipelineRow) as sinks:
        # The same global batches on every rank: stage 0 reads x, the last stage y.
        batches = build_batches(workload.model_spec(), 0, ctx.device)
        reference = reference_stage(workload, ctx, batches)
        for (strategy, microbatches), measurement in zip(runs, ids, strict=True):
            if measurement in done:
                continue
            log(f"begin {measurement} pipeline {strategy} microbatches={microbatches}")
            measured, final = measure(strategy, microbatches, workload, ctx, batches)
            diff = max_over_ranks(ctx, [float((final - reference).abs().max())])[0]
            measured = measured.with_diff(measurement, diff)
            if sinks is not None:
                row = build_row(spec, ctx, workload, measured)
                sinks.write(window_rows(measurement, measured.window_step_us), row)
            log(f"end {measurement}: bubble {measured.bubble:.3f}, max_param_diff {diff:.3g}")
