"""dispatch_bound (#30): the host's enqueue time per call is measured in the launch, rows whose
time per op is under twice it are marked, and the table points to --cuda-graph. The CUDA path
(nccl rows with enqueue_us filled) runs in ci/gpu-smoke.sh; here the parts that need no GPU:
the verdict, the host clock of a call, and gloo leaving both columns empty."""

from __future__ import annotations

import math
import time

import torch

from distbench.comm.dispatch import (
    DISPATCH_FACTOR,
    ENQUEUE_CALLS,
    dispatch_bound,
    host_times_us,
)
from distbench.comm.table import render_table
from distbench.primitives.base import Context

CPU = Context(0, 1, torch.device("cpu"), "gloo", None, (0,))


def test_the_verdict_is_below_twice_the_enqueue_time() -> None:
    assert DISPATCH_FACTOR == 2.0
    assert dispatch_bound(19.9, 10.0) == "true"
    assert dispatch_bound(20.0, 10.0) == "false"
    assert dispatch_bound(500.0, 10.0) == "false"
    assert dispatch_bound(5.0, math.nan) == ""  # gloo: nothing measured, no verdict
    assert dispatch_bound(math.nan, 10.0) == ""


def test_the_host_clock_times_each_call_alone() -> None:
    calls: list[float] = []

    def op() -> None:
        calls.append(time.perf_counter())
        time.sleep(0.002)

    times = host_times_us(CPU, op, ENQUEUE_CALLS)
    assert len(times) == len(calls) == ENQUEUE_CALLS
    assert all(1_900 < t < 50_000 for t in times), times  # each call's 2 ms sleep, alone


def _row(size: str, bound: str) -> dict[str, str]:
    return {
        "primitive": "all_reduce", "backend": "nccl", "device": "cuda", "world_size": "8",
        "timer": "cuda_event", "env": "", "size_bytes": size, "count": "1", "dtype": "float32",
        "op": "sum", "mode": "throughput", "time_us_p50": "20.0", "algbw_GBps": "1",
        "busbw_GBps": "1", "busbw_factor": "1.75", "wrong": "0", "dispatch_bound": bound,
    }  # fmt: skip


def test_the_table_points_dispatch_bound_rows_to_cuda_graphs() -> None:
    text = render_table([_row("1024", "true"), _row("65536", "true"), _row("1048576", "false")])
    assert "# 2 of 3 rows are dispatch-bound" in text and "--cuda-graph N" in text
    assert "dispatch-bound" not in render_table([_row("1048576", "false")])
