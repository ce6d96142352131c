"""One rank of `distbench ddp`: train the synthetic model under each strategy and time whole steps.

    distbench ddp --backend gloo --world-sizes 1,2 --strategies ddp,ddp-nocomm,grad-avg

(the CLI launches torchrun, which runs this through distbench.worker). Per strategy: a fresh
model with the seeded initial weights, the same pre-made batches, `warmup` untimed steps, then
`steps` timed ones. A step is zero_grad, forward, loss, backward, the strategy's communication and
optimizer.step(); its time is the max over ranks (what the job waits for). Rank 0 writes the rows;
rows wait until the baselines they refer to (ddp, ddp-nocomm, grad-avg run first) are measured.
"""

from __future__ import annotations

import gc
import math
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn

from distbench import ddp_metrics as metrics
from distbench.collectors.schema import (
    MAX_OVER_RANKS,
    RESULTS_CSV,
    SAMPLES_CSV,
    DdpRow,
    SampleRow,
)
from distbench.collectors.sink import CsvSink, read_rows
from distbench.comm import gather_samples, ranks_label
from distbench.ddp_spec import BASELINES, BUCKET_SWEPT, DDP_STRATEGIES, DdpSpec, StrategyRun
from distbench.models import build_batches, build_model
from distbench.plan import measurement_id
from distbench.primitives.base import Context
from distbench.spec import RunSpec
from distbench.stats import Stats
from distbench.strategies import build_strategy, comm_bytes_per_step
from distbench.timing import barrier, drain, max_over_ranks, timer_name

Batch = tuple[torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class Trained:
    """One strategy's measurement, identical on every rank after the cross-rank reductions."""

    run: StrategyRun
    measurement: str
    local_us: list[float]
    """This rank's step times."""
    max_us: list[float]
    """Per-step maximum over ranks."""
    local_loss: list[float]
    """This rank's loss on its shard, per timed step."""
    mean_loss: list[float]
    """Mean over ranks: the loss of the whole global batch."""
    max_param_diff: float


def train(
    strategy_module: nn.Module,
    after_backward: Callable[[], None],
    after_step: Callable[[int], None],
    optimizer: torch.optim.Optimizer,
    batches: list[Batch],
    warmup: int,
    ctx: Context,
) -> tuple[list[float], list[float]]:
    """Run every batch as one step; return the timed steps' times (us) and losses."""
    loss_fn = nn.CrossEntropyLoss()
    cuda = ctx.device.type == "cuda"
    losses: list[torch.Tensor] = []
    events: list[tuple[torch.cuda.Event, torch.cuda.Event]] = []
    host_us: list[float] = []
    for step, (x, y) in enumerate(batches):
        timed = step >= warmup
        if step == warmup:
            drain(ctx.device)  # warm-up work is finished before the first timed step
            barrier(ctx)  # and every rank starts the timed steps together
        if timed and cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
        begin = time.perf_counter_ns()
        optimizer.zero_grad()
        loss = loss_fn(strategy_module(x), y)
        loss.backward()
        after_backward()
        optimizer.step()
        after_step(step)
        if timed:
            if cuda:
                end.record()
                events.append((start, end))
            else:
                host_us.append((time.perf_counter_ns() - begin) / 1e3)
            losses.append(loss.detach())
    drain(ctx.device)  # the CUDA events are complete before they are read
    times = [s.elapsed_time(e) * 1e3 for s, e in events] if cuda else host_us
    return times, [float(v) for v in torch.stack(losses).cpu().tolist()]


def mean_over_ranks(ctx: Context, values: list[float]) -> list[float]:
    device = ctx.device if ctx.backend == "nccl" else torch.device("cpu")
    tensor = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(tensor, group=ctx.group)
    return [float(v) / ctx.world_size for v in tensor.cpu().tolist()]


def flat_params(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).clone()


def measure(
    run: StrategyRun,
    measurement: str,
    spec: DdpSpec,
    ctx: Context,
    batches: list[Batch],
    reference: torch.Tensor | None,
) -> tuple[Trained, torch.Tensor]:
    """Train one strategy from the seeded weights; return its measurement and final parameters."""
    model = build_model(spec, ctx.device)
    strategy = build_strategy(run, model, ctx, spec)
    optimizer = torch.optim.SGD(model.parameters(), lr=spec.lr)
    local_us, local_loss = train(
        strategy.module,
        strategy.after_backward,
        strategy.after_step,
        optimizer,
        batches,
        spec.warmup,
        ctx,
    )
    final = flat_params(model)
    # DDP's reducer sits in reference cycles: free it now, while its process group is alive (a
    # reducer collected at interpreter exit, after destroy_process_group, can abort the process).
    del strategy, optimizer, model
    gc.collect()
    diff = math.nan
    if reference is not None:
        diff = max_over_ranks(ctx, [float((final - reference).abs().max())])[0]
    trained = Trained(
        run=run,
        measurement=measurement,
        local_us=local_us,
        max_us=max_over_ranks(ctx, local_us),
        local_loss=local_loss,
        mean_loss=mean_over_ranks(ctx, local_loss),
        max_param_diff=diff,
    )
    return trained, final


def run_key(strategy: str, bucket_mb: str) -> tuple[str, str]:
    return strategy, bucket_mb


def format_mb(bucket_mb: float | None) -> str:
    return "" if bucket_mb is None else f"{bucket_mb:g}"


def one_rank_rates(run_dir: Path) -> dict[tuple[str, str], float]:
    """samples_per_s of this run's world-size-1 rows (its 1-rank launch runs first: world sizes
    launch in increasing order), by strategy and bucket size."""
    rates = {}
    for row in read_rows(run_dir / RESULTS_CSV):
        if row.get("primitive") == "ddp" and row.get("world_size") == "1":
            rate = float(row["samples_per_s"]) if row["samples_per_s"] else math.nan
            rates[run_key(row["strategy"], row["bucket_mb"])] = rate
    return rates


def build_row(
    spec: RunSpec,
    ctx: Context,
    trained: Trained,
    params: int,
    baselines: dict[str, float],
    one_rank: dict[tuple[str, str], float],
) -> DdpRow:
    workload: DdpSpec = spec.workload
    run = trained.run
    stats = Stats(tuple(trained.max_us))
    n = ctx.world_size
    rate = metrics.samples_per_s(n, workload.batch_size, stats.p50)
    bucket = format_mb(run.bucket_mb)
    # At one rank the job is its own reference; above, the 1-rank launch's row (if any).
    rate_1 = rate if n == 1 else one_rank.get(run_key(run.strategy, bucket), math.nan)
    nocomm = baselines.get("ddp-nocomm", math.nan)
    grad_avg = baselines.get("grad-avg", math.nan)
    comm_bytes = comm_bytes_per_step(run.strategy, params, workload.avg_every)
    is_ddp = run.strategy in DDP_STRATEGIES
    return DdpRow(
        run_id=spec.launch.run_id,
        label=spec.launch.label,
        host=socket.gethostname(),
        measurement=trained.measurement,
        primitive="ddp",
        strategy=run.strategy,
        backend=spec.launch.backend,
        device=ctx.device.type,
        world_size=n,
        nnodes=spec.launch.nnodes,
        ranks=ranks_label(ctx.global_ranks),
        model=workload.model,
        params=params,
        dtype=workload.dtype,
        batch_size=workload.batch_size,
        bucket_mb=bucket,
        gradient_as_bucket_view=str(workload.gradient_as_bucket_view).lower() if is_ddp else "",
        static_graph=str(workload.static_graph).lower() if is_ddp else "",
        avg_every=str(workload.avg_every) if run.strategy == "param-avg" else "",
        steps=workload.steps,
        warmup=workload.warmup,
        timer=timer_name(ctx.device),
        samples=stats.n,
        **{f"step_{name}": value for name, value in stats.as_columns().items()},
        samples_per_s=rate,
        scaling_efficiency=metrics.scaling_efficiency(n, rate, rate_1),
        comm_bytes_per_step=comm_bytes,
        comm_busbw_GBps=metrics.comm_busbw_gbps(comm_bytes, stats.p50, nocomm, n),
        comm_share=metrics.comm_share(stats.p50, nocomm),
        overlap=(
            metrics.overlap(stats.p50, nocomm, grad_avg)
            if run.strategy in BUCKET_SWEPT and n > 1  # one rank: nothing crosses a wire
            else math.nan
        ),
        max_param_diff=trained.max_param_diff,
    )


def sample_rows(
    measurement: str, rank: int, times: list[float], losses: list[float]
) -> list[SampleRow]:
    """One row per timed step: iter = step index (0-based, warm-up excluded), trial = 0."""
    return [
        SampleRow(measurement=measurement, rank=rank, trial=0, iter=i, time_us=t, loss=loss)
        for i, (t, loss) in enumerate(zip(times, losses, strict=True))
    ]


def run_ddp(spec: RunSpec, ctx: Context, log: Callable[[str], None]) -> None:
    """Measure every strategy of the spec on this rank; rank 0 writes the rows."""
    workload: DdpSpec = spec.workload
    run_dir = Path(spec.launch.run_dir)
    runs = workload.runs()
    ids = [measurement_id(ctx.world_size, index) for index in range(len(runs))]
    done = set(spec.launch.done)  # a resumed run: rows already in results.csv
    if done.issuperset(ids):
        log(f"world size {ctx.world_size}: every ddp measurement is already in results.csv")
        return
    # A partly done world size is measured again whole (the rows need its baselines and its
    # reference weights); only the missing rows are written.
    writer = ctx.rank == 0
    one_rank = one_rank_rates(run_dir) if writer else {}
    results = CsvSink(run_dir / RESULTS_CSV, DdpRow) if writer else None
    samples = (
        CsvSink(run_dir / SAMPLES_CSV, SampleRow, run_id=spec.launch.run_id) if writer else None
    )
    batches = build_batches(workload, ctx.global_ranks[ctx.rank], ctx.device)
    params = sum(p.numel() for p in build_model(workload, torch.device("cpu")).parameters())
    # Rows refer to the baselines (run first): hold them back until the last baseline is measured.
    last_baseline = max((i for i, run in enumerate(runs) if run.strategy in BASELINES), default=-1)
    baselines: dict[str, float] = {}
    reference: torch.Tensor | None = None
    pending: list[Trained] = []
    local: list[SampleRow] = []
    try:
        for index, (run, measurement) in enumerate(zip(runs, ids, strict=True)):
            log(
                f"begin {measurement} ddp {run.strategy} model={workload.model} params={params} "
                f"bucket_mb={format_mb(run.bucket_mb)}"
            )
            trained, final = measure(run, measurement, workload, ctx, batches, reference)
            if index == 0 and run.strategy == "ddp":
                reference = final  # the first ddp run: max_param_diff's reference
                trained = replace(trained, max_param_diff=0.0)
            if run.strategy in BASELINES and run.strategy not in baselines:
                baselines[run.strategy] = Stats(tuple(trained.max_us)).p50
            if measurement not in done:
                local += sample_rows(
                    measurement, ctx.global_ranks[ctx.rank], trained.local_us, trained.local_loss
                )
                pending.append(trained)
            if index >= last_baseline:
                if results is not None and samples is not None:
                    for ready in pending:  # samples first: the row commits the measurement
                        samples.write(
                            sample_rows(
                                ready.measurement, MAX_OVER_RANKS, ready.max_us, ready.mean_loss
                            )
                        )
                        results.write([build_row(spec, ctx, ready, params, baselines, one_rank)])
                pending = []
            del trained, final
        gather_samples(ctx, local, samples)
        # Leave no DDP object for interpreter exit and no rank behind: without these a gloo rank
        # sometimes aborted at exit ("terminate called without an active exception").
        gc.collect()
        barrier(ctx)
    finally:
        for sink in (results, samples):
            if sink is not None:
                sink.close()
