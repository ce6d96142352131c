"""init's rows: one InitRow per init method and phase (the common columns from distbench.rows,
then the phase's), and its samples.csv rows."""

from __future__ import annotations

import torch

from distbench.collectors.rows_init import InitRow
from distbench.collectors.schema import SampleRow
from distbench.groups import placement_of
from distbench.init.spec import InitSpec
from distbench.rows import result_columns
from distbench.spec import RunSpec, measurement_id
from distbench.stats import Stats
from distbench.timing import timer_name


def init_row(
    spec: RunSpec,
    hosts: list[tuple[int, str]],
    measurement: str,
    method: str,
    phase: str,
    worst: list[float],
) -> InitRow:
    """Rank 0's row of one phase of one init method; `hosts`: (node, host) of every rank."""
    stats = Stats(tuple(worst))
    placement = placement_of(hosts)
    size = 4 if phase == "first_collective" else 0
    return InitRow(
        **result_columns(
            spec,
            host=hosts[0][1],
            measurement=measurement,
            primitive="init",
            ranks=tuple(range(len(hosts))),
            nnodes=placement.nnodes,
            hosts=placement.hosts,
            mode="latency",
            stats=stats,
            timer=timer_name(torch.device("cpu"), "latency"),
            iters=1,
            warmup=0,
        ),
        dtype="float32",
        op="sum" if phase == "first_collective" else "",
        size_bytes=size,
        requested_bytes=size,
        count=size // 4,
        root="",
        src="",
        dst="",
        pattern=f"{method}:{phase}",
        wrong=-1,
        phase=phase,
    )


def method_samples(
    workload: InitSpec, world: int, index: int, rank: int, times: list[list[float]]
) -> list[list[SampleRow]]:
    """Method `index`'s samples of one rank, or of the maximum (rank -1), per phase: `times` is
    phase -> one time per repetition (us)."""
    return [
        [
            SampleRow(measurement_id(world, index * len(times) + p, workload.tag), rank, t, 0, v)
            for t, v in enumerate(values)
        ]
        for p, values in enumerate(times)
    ]
