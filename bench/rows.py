"""The columns every results.csv row of the communication kind shares (collectors/schema.py
ResultRow: comm, pairs, rpc, init, overlap), built once: which run and measurement, where it ran,
how it was timed and the figures of its samples. Each workload's rows.py adds what its case is
(dtype, op, sizes, root/src/dst, pattern, wrong, its own columns):

    ResultRow(**result_columns(spec, ...), dtype=..., op=..., size_bytes=..., ...)

so a new common column is one line here, not one per workload.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from distbench.parse import ranks_label
from distbench.spec import RunSpec
from distbench.stats import Stats, row_figures
from distbench.timing import timer_name


def result_columns(
    spec: RunSpec,
    *,
    host: str,
    measurement: str,
    primitive: str,
    ranks: tuple[int, ...],
    nnodes: int,
    hosts: str,
    mode: str,
    stats: Stats,
    algbw: float = math.nan,
    factor: float = math.nan,
    device: str | None = None,
    world_size: int | None = None,
    timer: str | None = None,
    iters: int | None = None,
    warmup: int | None = None,
    trials: int | None = None,
    trials_run: int | None = None,
) -> dict[str, Any]:
    """The shared columns of one row. `ranks`: the global ranks measured; `stats`: the slowest
    rank's samples; `algbw` (GB/s) and `factor` make algbw and busbw (nan: no bandwidth). None
    takes the default: device (the launch's), world_size (the count of `ranks`), timer
    (timer_name of the device and mode), iters, warmup and trials (the workload's), trials_run
    (= trials)."""
    workload = spec.workload
    device = spec.launch.device if device is None else device
    trials = workload.trials if trials is None else trials
    return {
        **spec.run_columns,
        "host": host,
        "measurement": measurement,
        "primitive": primitive,
        "device": device,
        "world_size": len(ranks) if world_size is None else world_size,
        "nnodes": nnodes,
        "ranks": ranks_label(ranks),
        "hosts": hosts,
        "mode": mode,
        "timer": timer_name(torch.device(device), mode) if timer is None else timer,
        "iters": workload.iters if iters is None else iters,
        "warmup": workload.warmup if warmup is None else warmup,
        "trials": trials,
        "trials_run": trials if trials_run is None else trials_run,
        **row_figures(stats, mode == "latency", algbw, factor),
    }
