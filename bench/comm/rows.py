"""comm's rows: rank 0's ResultRow of one measured case (the common columns from
distbench.rows, then the case's), and its samples.csv rows."""

from __future__ import annotations

import math
import socket
from dataclasses import dataclass

from distbench.collectors.schema import ResultRow, SampleRow
from distbench.comm.dispatch import dispatch_bound
from distbench.comm.graph import GRAPH_TIMER
from distbench.comm.precision import Trials
from distbench.comm.spec import CommSpec
from distbench.groups import Placement
from distbench.primitives import get_primitive
from distbench.primitives.base import Case, Context
from distbench.rows import result_columns
from distbench.spec import RunSpec
from distbench.stats import Stats, algbw_gbps


@dataclass(frozen=True)
class Measured:
    """One case's timing as this rank saw it, plus the cross-rank figures."""

    case: Case
    mode: str
    iters: int
    """Ops per trial: --iters, or the count --iters auto chose for this case."""
    trials: Trials
    wrong: int
    enqueue_us: float = math.nan
    """The host's time to issue one op (comm/dispatch.py); NaN off nccl."""
    api: str = "c10d"
    """Which of --api's interfaces issued it (the row's api column)."""


def build_row(
    spec: RunSpec,
    ctx: Context,
    placement: Placement,
    measurement: str,
    primitive: str,
    dtype: str,
    requested: int,
    result: Measured,
) -> ResultRow:
    """Rank 0's row. At world size 1 nothing leaves the rank: algbw and busbw are empty (a copy's
    speed is no network's). In throughput mode p95/p99 are empty (stats.py says why)."""
    workload: CommSpec = spec.workload
    prim = get_primitive(primitive)
    converged = result.trials.converged
    # --precision looked at the interval while adding trials: a latency row's is its sequence
    stats = Stats(tuple(result.trials.max_us), result.trials.trials_run, converged is not None)
    case = result.case  # alltoallv: its own bytes for algbw, busbw factor and byte columns
    factor = prim.busbw_factor(ctx.world_size) if case.busbw_factor is None else case.busbw_factor
    moves = ctx.world_size > 1
    algbw = algbw_gbps(case.bw_bytes or case.size_bytes, stats.p50) if moves else math.nan
    labels = result.case.labels
    return ResultRow(
        **result_columns(
            spec,
            host=socket.gethostname(),
            measurement=measurement,
            primitive=primitive,
            ranks=ctx.global_ranks,
            nnodes=placement.nnodes,
            hosts=placement.hosts,
            mode=result.mode,
            stats=stats,
            algbw=algbw,
            factor=factor,
            device=ctx.device.type,
            world_size=ctx.world_size,
            timer=GRAPH_TIMER if workload.cuda_graph else None,
            iters=result.iters,
            trials_run=result.trials.trials_run,
        ),
        dtype=dtype,
        op=workload.op if prim.reduces else "",
        size_bytes=result.case.size_bytes,
        requested_bytes=requested,
        count=result.case.count,
        root=labels.get("root", ""),
        src=labels.get("src", ""),
        dst=labels.get("dst", ""),
        pattern=labels.get("pattern", ""),
        placement=labels.get("placement", "out"),
        trial_order=workload.trial_order,
        wrong=result.wrong,
        api=result.api,
        compile_s=float(labels.get("compile_s", "nan")),
        msg_rate_per_s=1e6 / stats.p50
        if moves and primitive == "send_recv" and stats.p50 > 0
        else math.nan,
        converged="" if converged is None else str(converged).lower(),
        graph=str(workload.cuda_graph > 0).lower(),
        buffers=workload.buffers,
        enqueue_us=result.enqueue_us,
        dispatch_bound=dispatch_bound(stats.p50, result.enqueue_us),
        **case.columns,
    )


def sample_rows(
    measurement: str, rank: int, mode: str, trials: int, samples: list[float]
) -> list[SampleRow]:
    """Samples in trial-major order: one per trial (throughput) or `iters` per trial (latency)."""
    per_trial = max(1, len(samples) // trials)
    rows = []
    for index, value in enumerate(samples):
        trial, it = divmod(index, per_trial)
        rows.append(
            SampleRow(
                measurement=measurement,
                rank=rank,
                trial=trial,
                iter=it if mode == "latency" else -1,
                time_us=value,
            )
        )
    return rows
