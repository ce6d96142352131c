"""One rank of `distbench ddp`: train the synthetic model under each strategy and time whole steps.

    distbench ddp --backend gloo --world-sizes 1,2 --strategies ddp,ddp-nocomm,ddp-nooverlap

(the CLI launches torchrun, which runs this through distbench.worker). Per strategy: a fresh
model with the seeded initial weights, the same pre-made batches, `warmup` untimed steps, then
`steps` timed ones in windows between barriers (ddp/steps.py). A step is zero_grad, forward, loss,
backward, the strategy's communication and optimizer.step(); a window's step time is the slowest
rank's window time / steps (what the job waits for). Rank 0 writes the rows (ddp/rows.py); rows wait
until the baselines they refer to (ddp, ddp-nocomm, ddp-nooverlap, local run first) are measured.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import torch
from torch import nn

from distbench.collectors.schema import DdpRow, SampleRow
from distbench.ddp import fsdp, memory
from distbench.ddp.models import build_batches, build_model
from distbench.ddp.rows import (
    Trained,
    build_row,
    format_mb,
    one_rank_rates,
    rank0_sinks,
    run_key,
    step_rows,
    window_rows,
)
from distbench.ddp.spec import BASELINES, DdpSpec, StrategyRun
from distbench.ddp.steps import Batch, train
from distbench.ddp.strategies import build_strategy
from distbench.primitives.base import Context
from distbench.ranks import max_over_ranks, save_rank_samples
from distbench.spec import RunSpec, measurement_id


def flat_params(model: nn.Module) -> torch.Tensor:
    """Every parameter, whole (FSDP's shards gathered), flattened in registration order."""
    return torch.cat([fsdp.full_param(p).reshape(-1) for p in model.parameters()]).clone()


def settle_memory(spec: DdpSpec, ctx: Context, batches: list[Batch]) -> None:
    """One untimed local step of a throw-away model, before the first strategy's peak_mem_bytes
    baseline. A process's first forward and backward make allocations that it keeps (autograd's
    worker threads, the math libraries' workspaces, ~85 MB on CPU); without this step they
    landed in whichever strategy ran first (ddp 97 MB against ddp-nooverlap's 4 MB, the same
    model). No communication: nothing here waits for another rank."""
    model = build_model(spec, ctx.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=spec.lr)
    x, y = batches[0]
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
    del model, optimizer
    gc.collect()


def measure(
    run: StrategyRun,
    measurement: str,
    spec: DdpSpec,
    ctx: Context,
    batches: list[Batch],
    reference: torch.Tensor | None,
) -> tuple[Trained, torch.Tensor]:
    """Train one strategy from the seeded weights; return its measurement and final parameters."""
    # before the model: peak_mem_bytes counts what it adds (dp: on each of its GPUs)
    peak_memory = memory.PeakMemory(memory.devices_of(run.strategy, ctx.device))
    model = build_model(spec, ctx.device)
    gathered, scattered = fsdp.bytes_per_step(model, run.strategy, ctx.world_size)
    strategy = build_strategy(run, model, ctx, spec)
    optimizer = torch.optim.SGD(model.parameters(), lr=spec.lr)
    peak_memory.reset()
    timed = train(
        strategy.module,
        strategy.after_backward,
        strategy.after_step,
        optimizer,
        batches,
        spec.warmup,
        spec.window_length(),
        ctx,
    )
    peak = max_over_ranks(ctx, [peak_memory.since()])[0]
    final = flat_params(model)
    # DDP's reducer sits in reference cycles: free it now, while its process group is alive (a
    # reducer collected at interpreter exit, after destroy_process_group, can abort the process).
    del strategy, optimizer, model
    gc.collect()
    diff = math.nan
    if reference is not None:
        diff = max_over_ranks(ctx, [float((final - reference).abs().max())])[0]
    mem = (peak, memory.source(ctx.device))
    return Trained(run, measurement, timed, diff, (gathered, scattered), mem), final


def log_wall_clock(trained: Trained, log: Callable[[str], None]) -> None:
    """This rank's own wall clock of the timed steps next to what the row will say."""
    timed = trained.timed
    log(
        f"end {trained.measurement}: {len(timed.window_us)} windows of {timed.window_steps} "
        f"steps; this rank's timed steps {sum(timed.window_us) / 1e3:.3f} ms, the slowest "
        f"rank's windows {sum(timed.max_window_us) / 1e3:.3f} ms"
    )


def run_ddp(spec: RunSpec, ctx: Context, log: Callable[[str], None]) -> None:
    """Measure every strategy of the spec on this rank; rank 0 writes the rows."""
    workload: DdpSpec = spec.workload
    run_dir = Path(spec.launch.run_dir)
    runs = workload.runs()
    ids = [measurement_id(ctx.world_size, index, workload.tag) for index in range(len(runs))]
    done = set(spec.launch.done)  # a resumed run: rows already in results.csv
    if done.issuperset(ids):
        log(f"world size {ctx.world_size}: every ddp measurement is already in results.csv")
        return
    # A partly done world size is measured again whole (the rows need its baselines and its
    # reference weights); only the missing rows are written.
    writer = ctx.rank == 0
    one_rank = one_rank_rates(run_dir, spec.env_label) if writer else {}
    with rank0_sinks(spec, ctx, DdpRow) as sinks:
        batches = build_batches(workload, ctx.global_ranks[ctx.rank], ctx.device)
        settle_memory(workload, ctx, batches)
        params = sum(p.numel() for p in build_model(workload, torch.device("cpu")).parameters())
        # Rows refer to the baselines (run first): hold them back until the last baseline is
        # measured.
        last_baseline = max(
            (i for i, run in enumerate(runs) if run.strategy in BASELINES), default=-1
        )
        baselines: dict[tuple[str, str], float] = {}
        reference: torch.Tensor | None = None
        pending: list[Trained] = []
        local: list[SampleRow] = []
        for index, (run, measurement) in enumerate(zip(runs, ids, strict=True)):
            log(
                f"begin {measurement} ddp {run.strategy} model={workload.model} params={params} "
                f"bucket_mb={format_mb(run.bucket_mb)}"
            )
            trained, final = measure(run, measurement, workload, ctx, batches, reference)
            if index == 0 and run.strategy == "ddp":
                reference = final  # the first ddp run: max_param_diff's reference
                trained = replace(trained, max_param_diff=0.0)
            if run.strategy in BASELINES:
                key = run_key(run.strategy, format_mb(run.bucket_mb))
                baselines[key] = trained.mean_step_us()
            log_wall_clock(trained, log)
            if measurement not in done:
                local += step_rows(trained, ctx.global_ranks[ctx.rank])
                pending.append(trained)
            if index >= last_baseline:
                if sinks is not None:  # rank 0
                    for ready in pending:
                        row = build_row(spec, ctx, ready, params, baselines, one_rank)
                        sinks.write(window_rows(ready.measurement, ready.timed.window_step_us), row)
                pending = []
            del trained, final
        save_rank_samples(ctx, local, spec.launch)  # --rank-samples
