"""The rows of one `distbench ddp` measurement: its results.csv row and its samples.csv rows.

samples.csv holds, per measurement:
- rank -1 (the max over ranks): one row per window, trial = window index, iter = -1,
  time_us = the slowest rank's window time / steps in the window, loss empty. These independent
  samples feed the statistics and compare's rank test.
- rank r: one row per timed step of that rank, trial = its window, iter = the step (0-based,
  warm-up excluded), time_us = the rank's own step time, loss = its loss on its shard. A rank's
  time_us add up to its own wall clock of the timed steps (barriers excluded).
"""

from __future__ import annotations

import gc
import math
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from distbench.collectors.schema import MAX_OVER_RANKS, RESULTS_CSV, DdpRow, SampleRow
from distbench.collectors.sink import RunSinks, read_rows, run_sinks
from distbench.ddp import metrics
from distbench.ddp.spec import (
    COMM_BASELINE,
    DDP_STRATEGIES,
    HIDDEN_SHARE_REFERENCE,
    DdpSpec,
    StrategyRun,
)
from distbench.ddp.steps import Timed
from distbench.ddp.strategies import comm_bytes_per_step
from distbench.parse import ranks_label
from distbench.primitives.base import Context
from distbench.spec import RunSpec
from distbench.stats import Stats
from distbench.timing import barrier, timer_name


@dataclass(frozen=True)
class Trained:
    """One strategy's measurement: this rank's steps and the slowest rank's windows."""

    run: StrategyRun
    measurement: str
    timed: Timed
    max_param_diff: float
    fsdp_bytes: tuple[int, int] = (0, 0)
    """(all-gathered, reduce-scattered) bytes per step: FSDP strategies (ddp/fsdp.py)."""
    peak_mem: tuple[float, str] = (math.nan, "")
    """(the largest rank's peak memory in bytes, how it was measured): ddp/memory.py."""

    def mean_step_us(self) -> float:
        """Mean step time (us): the slowest rank's windows, summed, / timed steps."""
        return Stats(tuple(self.timed.window_step_us)).mean


def run_key(strategy: str, bucket_mb: str) -> tuple[str, str]:
    return strategy, bucket_mb


def format_mb(bucket_mb: float | None) -> str:
    return "" if bucket_mb is None else f"{bucket_mb:g}"


def one_rank_rates(run_dir: Path, env: str = "") -> dict[tuple[str, str], float]:
    """samples_per_s of this run's world-size-1 rows of the same --env combination `env` (its
    1-rank launch runs first: world sizes launch in increasing order), by strategy and bucket
    size."""
    rates = {}
    for row in read_rows(run_dir / RESULTS_CSV):
        same_env = row.get("env", "") == env
        if row.get("primitive") == "ddp" and row.get("world_size") == "1" and same_env:
            rate = float(row["samples_per_s"]) if row["samples_per_s"] else math.nan
            rates[run_key(row["strategy"], row["bucket_mb"])] = rate
    return rates


def training_columns(
    spec: RunSpec, ctx: Context, measurement: str, primitive: str, strategy: str
) -> dict[str, Any]:
    """run_id to ranks: which run, measurement, strategy and ranks a training row (ddp's or
    pipeline's) is of."""
    return {
        "run_id": spec.launch.run_id,
        "label": spec.launch.label,
        "host": socket.gethostname(),
        "measurement": measurement,
        "primitive": primitive,
        "strategy": strategy,
        "backend": spec.launch.backend,
        "device": ctx.device.type,
        "world_size": ctx.world_size,
        "nnodes": spec.launch.nnodes,
        "ranks": ranks_label(ctx.global_ranks),
    }


def window_columns(
    row_type: type, steps: int, warmup: int, window_steps: int, ctx: Context, stats: Stats
) -> dict[str, Any]:
    """steps to step_time_us_*: a training row's timed windows and their statistics (the
    step_time_us_* columns `row_type` has)."""
    columns = {f.name for f in fields(row_type)}
    timed = {f"step_{name}": value for name, value in stats.as_columns().items()}
    return {
        "steps": steps,
        "warmup": warmup,
        "window_steps": window_steps,
        "timer": timer_name(ctx.device),
        "samples": stats.n,
        **{name: value for name, value in timed.items() if name in columns},
    }


def comm_columns(
    strategy: str,
    mean: float,
    comm_bytes: int,
    fsdp_bytes: tuple[int, int],
    baselines: dict[tuple[str, str], float],
    world_size: int,
) -> dict[str, Any]:
    """comm_bytes_per_step, comm_busbw_GBps, comm_share and comm_baseline of a row whose mean step
    is `mean` (us): the exposed communication is the step minus its own no-communication
    baseline's mean (spec.COMM_BASELINE; any bucket size: it sends nothing). At one rank nothing
    crosses a link: the bytes are None (an empty cell), as busbw and the share are."""
    name = COMM_BASELINE.get(strategy, "")
    base = next((t for (other, _), t in baselines.items() if name and other == name), math.nan)
    busbw = metrics.comm_busbw_gbps(comm_bytes, mean, base, world_size)
    if any(fsdp_bytes):  # FSDP: all_gather + reduce_scatter, not all_reduce
        comm_bytes = sum(fsdp_bytes)
        busbw = metrics.comm_busbw_gbps(comm_bytes, mean, base, world_size) / 2
    return {
        "comm_bytes_per_step": comm_bytes if world_size > 1 else None,
        "comm_busbw_GBps": busbw,
        "comm_share": metrics.comm_share(world_size, mean, base),
        "comm_baseline": name,
    }


def build_row(
    spec: RunSpec,
    ctx: Context,
    trained: Trained,
    params: int,
    baselines: dict[tuple[str, str], float],
    one_rank: dict[tuple[str, str], float],
) -> DdpRow:
    """The results.csv row; `baselines` holds the mean step times of this world size's baseline
    runs (ddp-nocomm, local, ddp-nooverlap per bucket size), by run_key."""
    workload: DdpSpec = spec.workload
    run = trained.run
    stats = Stats(tuple(trained.timed.window_step_us))
    mean = stats.mean  # every rate and share from the mean: work over total time
    n = ctx.world_size
    rate = metrics.samples_per_s(n, workload.batch_size, mean)
    bucket = format_mb(run.bucket_mb)
    # At one rank the job is its own reference; above, the 1-rank launch's row (if any).
    rate_1 = rate if n == 1 else one_rank.get(run_key(run.strategy, bucket), math.nan)
    nocomm = next((t for (name, _), t in baselines.items() if name == "ddp-nocomm"), math.nan)
    reference = HIDDEN_SHARE_REFERENCE.get(run.strategy, "")
    comm_bytes = comm_bytes_per_step(run.strategy, params, workload.avg_every)
    comm = comm_columns(run.strategy, mean, comm_bytes, trained.fsdp_bytes, baselines, n)
    is_ddp = run.strategy in DDP_STRATEGIES
    return DdpRow(
        **training_columns(spec, ctx, trained.measurement, "ddp", run.strategy),
        model=workload.model,
        params=params,
        dtype=workload.dtype,
        batch_size=workload.batch_size,
        bucket_mb=bucket,
        gradient_as_bucket_view=str(workload.gradient_as_bucket_view).lower() if is_ddp else "",
        static_graph=str(workload.static_graph).lower() if is_ddp else "",
        avg_every=str(workload.avg_every) if run.strategy == "param-avg" else "",
        **window_columns(
            DdpRow, workload.steps, workload.warmup, trained.timed.window_steps, ctx, stats
        ),
        samples_per_s=rate,
        scaling_efficiency=metrics.scaling_efficiency(n, rate, rate_1),
        **comm,
        comm_hidden_share=metrics.comm_hidden_share(
            n, mean, nocomm, baselines.get(run_key(reference, bucket), math.nan)
        ),
        max_param_diff=trained.max_param_diff,
        env=spec.env_label,
        allgather_bytes_per_step=trained.fsdp_bytes[0] if n > 1 else None,
        reduce_scatter_bytes_per_step=trained.fsdp_bytes[1] if n > 1 else None,
        peak_mem_bytes=trained.peak_mem[0],
        mem_source=trained.peak_mem[1],
    )


@contextmanager
def rank0_sinks(spec: RunSpec, ctx: Context, row_type: type) -> Iterator[RunSinks | None]:
    """run_sinks of a training workload (ddp's, pipeline's): on rank 0, None on the others.
    After the measurements, every rank collects garbage and meets at a barrier: without these a
    gloo rank sometimes aborted at exit ("terminate called without an active exception"), with a
    DDP object left for interpreter exit or a rank left behind."""
    with run_sinks(spec.launch.run_dir, row_type, spec.launch.run_id, ctx.rank == 0) as sinks:
        yield sinks
        gc.collect()
        barrier(ctx)


def window_rows(measurement: str, window_step_us: list[float]) -> list[SampleRow]:
    """rank -1: one row per window (the statistics' samples); loss is per rank, per step."""
    return [
        SampleRow(measurement, MAX_OVER_RANKS, trial=w, iter=-1, time_us=t)
        for w, t in enumerate(window_step_us)
    ]


def step_rows(trained: Trained, rank: int) -> list[SampleRow]:
    """This rank's own rows: one per timed step, trial = its window, iter = the step."""
    timed = trained.timed
    return [
        SampleRow(
            trained.measurement, rank, trial=i // timed.window_steps, iter=i, time_us=t, loss=x
        )
        for i, (t, x) in enumerate(zip(timed.step_us, timed.loss, strict=True))
    ]
