"""Rank side of `distbench init`: a fresh process group `trials` times per init method, in the
launch's own processes.

    torchrun --nproc-per-node 4 -m distbench.worker RUN/spec.json    # the CLI starts it

Rank 0 first picks every rendezvous (free ports, fresh file paths) and shares them over the
launch's group, which is then destroyed: from here on only the measured groups exist. Each
repetition times, on every rank, init_process_group (from the call to its return: the rendezvous
includes waiting for the last rank), the first collective (an all_reduce of one float32),
--new-groups K subgroups and destroy_process_group (after an untimed barrier, so every rank
starts the teardown together). After a method's repetitions an untimed tcp:// group takes the
per-sample maximum over ranks of every phase (one tensor all_reduce); rank 0 writes the method's
rows (each sample the slowest rank's time) and those samples (rank -1), then that group is
destroyed, except after the last method: the ranks' own samples (--rank-samples) are kept over it
at the end, and the worker destroys it.
"""

from __future__ import annotations

import os
import shutil
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from distbench.collectors.rows_init import InitRow
from distbench.collectors.schema import MAX_OVER_RANKS, SampleRow
from distbench.collectors.sink import RunSinks, run_sinks
from distbench.init.rows import init_row, method_samples
from distbench.init.spec import InitSpec
from distbench.ports import free_ports
from distbench.primitives.base import Context
from distbench.ranks import max_over_ranks, save_rank_samples
from distbench.spec import RunSpec

RENDEZVOUS_DIR = ".init-rendezvous"
"""file:// stores live here, in the run directory, and are removed at the end."""


@dataclass(frozen=True)
class Rendezvous:
    """Every group's address, chosen by rank 0 before the launch's group goes away."""

    addr: str
    ports: list[list[int]]
    """method index -> per repetition a fresh port (env, tcp; unused for file)."""
    collect: list[int]
    """method index -> the port of the untimed group that gathers its times."""
    files: list[list[str]]
    """method index -> per repetition a fresh file:// path."""
    hosts: list[tuple[int, str]]
    """global rank -> (torchrun node, host), gathered before the launch's group goes away."""


def plan_rendezvous(workload: InitSpec, run_dir: Path) -> Rendezvous:
    methods, trials = len(workload.methods), workload.trials
    ports = free_ports(methods * (trials + 1))
    folder = run_dir / RENDEZVOUS_DIR
    folder.mkdir(exist_ok=True)
    return Rendezvous(
        addr=os.environ.get("MASTER_ADDR", "127.0.0.1"),
        ports=[ports[m * trials : (m + 1) * trials] for m in range(methods)],
        collect=ports[methods * trials :],
        files=[[str(folder / f"{m}-{t}") for t in range(trials)] for m in range(methods)],
        hosts=[],
    )


def join(method: str, where: str | int, rdzv: Rendezvous, ctx: Context, timeout: float) -> None:
    """init_process_group through `method` at a port or file path."""
    common: dict[str, Any] = {"backend": ctx.backend, "timeout": timedelta(seconds=timeout)}
    if method == "env":
        os.environ["MASTER_ADDR"] = rdzv.addr
        os.environ["MASTER_PORT"] = str(where)
        dist.init_process_group(init_method="env://", **common)
        return
    url = f"tcp://{rdzv.addr}:{where}" if method == "tcp" else f"file://{where}"
    dist.init_process_group(init_method=url, rank=ctx.rank, world_size=ctx.world_size, **common)


def repetition(
    method: str, where: str | int, rdzv: Rendezvous, ctx: Context, spec: RunSpec
) -> dict[str, float]:
    """One fresh group: this rank's time of every phase, in microseconds."""
    workload: InitSpec = spec.workload
    times: dict[str, float] = {}
    start = time.perf_counter()
    join(method, where, rdzv, ctx, spec.launch.timeout_s)
    joined = time.perf_counter()
    times["init_process_group"] = joined - start
    dist.all_reduce(torch.ones(1, device=ctx.device))
    if ctx.device.type == "cuda":
        torch.cuda.synchronize(ctx.device)
    first = time.perf_counter()
    times["first_collective"] = first - joined
    if workload.new_groups:
        for _ in range(workload.new_groups):
            dist.new_group(ranks=list(range(ctx.world_size)))
        times["new_groups"] = time.perf_counter() - first
    dist.barrier()
    teardown = time.perf_counter()
    dist.destroy_process_group()
    times["destroy_process_group"] = time.perf_counter() - teardown
    return {phase: seconds * 1e6 for phase, seconds in times.items()}


def write_method(
    spec: RunSpec, rdzv: Rendezvous, index: int, worst: list[list[float]], sinks: RunSinks
) -> None:
    """Rank 0: one row per phase of method `index` with its samples, each the slowest rank's
    (`worst`: phase -> per repetition; samples first: the row commits the measurement)."""
    workload: InitSpec = spec.workload
    method = workload.methods[index]
    per_phase = method_samples(workload, len(rdzv.hosts), index, MAX_OVER_RANKS, worst)
    for phase, samples, values in zip(workload.phases, per_phase, worst, strict=True):
        row = init_row(spec, rdzv.hosts, samples[0].measurement, method, phase, values)
        sinks.write(samples, row)


def by_phase(phases: Sequence[str], mine: list[dict[str, float]]) -> list[list[float]]:
    """This rank's times as phase -> per repetition (us)."""
    return [[trial[phase] for trial in mine] for phase in phases]


def run_init(spec: RunSpec, ctx: Context, log: Callable[[str], None]) -> None:
    """Every init method's repetitions; rank 0 writes each method's rows as it ends."""
    workload: InitSpec = spec.workload
    run_dir = Path(spec.launch.run_dir)
    # Under torchrun, env:// and tcp:// would otherwise connect to the agent's store as clients
    # (at the given port, where nobody listens): every group here gets a fresh store of its own.
    os.environ["TORCHELASTIC_USE_AGENT_STORE"] = "False"
    shared: list[Any] = [plan_rendezvous(workload, run_dir) if ctx.rank == 0 else None]
    dist.broadcast_object_list(shared, src=0)
    hosts: list[Any] = [None] * ctx.world_size
    dist.all_gather_object(hosts, (int(os.environ.get("GROUP_RANK", "0")), socket.gethostname()))
    rdzv: Rendezvous = replace(shared[0], hosts=hosts)
    dist.barrier()
    dist.destroy_process_group()
    collect = replace(ctx, group=None)  # each method's untimed tcp:// group, the default one
    local: list[SampleRow] = []  # this rank's samples, kept at the end (--rank-samples)
    try:
        with run_sinks(run_dir, InitRow, spec.launch.run_id, ctx.rank == 0) as sinks:
            for index, method in enumerate(workload.methods):
                log(f"init {method}: {workload.trials} fresh groups")
                places = rdzv.files[index] if method == "file" else rdzv.ports[index]
                mine = [repetition(method, where, rdzv, ctx, spec) for where in places]
                join("tcp", rdzv.collect[index], rdzv, ctx, spec.launch.timeout_s)
                times = by_phase(workload.phases, mine)
                flat = max_over_ranks(collect, [v for values in times for v in values])
                worst = [flat[p * len(mine) : (p + 1) * len(mine)] for p in range(len(times))]
                for rows in method_samples(workload, ctx.world_size, index, ctx.rank, times):
                    local += rows
                if sinks is not None:
                    write_method(spec, rdzv, index, worst, sinks)
                if index < len(workload.methods) - 1:
                    dist.barrier()
                    dist.destroy_process_group()
            save_rank_samples(collect, local, spec.launch)  # --rank-samples
    finally:
        if ctx.rank == 0:
            shutil.rmtree(run_dir / RENDEZVOUS_DIR, ignore_errors=True)
