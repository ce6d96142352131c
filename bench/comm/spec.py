"""What `distbench <primitive>` and `sweep` measure on every rank: the CommSpec of spec.json
(torch-free), and the rows one launch of it writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from distbench.parse import DTYPES, MODES, OPS, UsageError
from distbench.primitives.facts import FACTS
from distbench.spec import check_known, check_minimums

TRIAL_ORDERS = ("sequential", "grouped", "interleaved")
"""How one launch orders its trials (CommSpec.trial_order, the trial_order column): sequential,
in rounds over groups of GROUP consecutive measurements, or in rounds over the whole launch
(comm/interleave.py)."""
GROUP = 3
"""Measurements per group of --order grouped: a row's consecutive trials are GROUP visits apart,
as they were in the recorded launches its coverage was measured on (3 sizes interleaved:
docs/measurement.md), and a crash loses at most the group in flight."""


@dataclass(frozen=True)
class CommSpec:
    """The communication sweep each launch measures."""

    primitives: tuple[str, ...]
    """torch names, e.g. ('all_reduce',); one launch measures all of them."""
    sizes: tuple[int, ...]
    """Requested bytes (nccl-tests' size convention per primitive)."""
    dtypes: tuple[str, ...] = ("float32",)
    op: str = "sum"
    modes: tuple[str, ...] = ("throughput",)
    iters: int = 20
    """Throughput: ops per timed trial. Latency: isolated ops per trial, each a sample."""
    warmup: int = 5
    """Untimed ops before each measurement."""
    trials: int = 5
    """Throughput: timed blocks per measurement, each one sample."""
    check: bool = False
    """Verify results bit-exactly after timing (untimed)."""
    root: str = "0"
    """Root rank for broadcast/reduce, or 'all' to rotate it."""
    options: dict[str, Any] = field(default_factory=dict)
    """Primitive-specific settings (e.g. send/recv pairs and window)."""
    tag: str = ""
    """Prefix of measurement ids when one run directory holds several specs (a sweep matrix's
    other backends, e.g. 'nccl/'), keeping them unique; empty otherwise."""
    iters_auto: bool = False
    """--iters auto: each case's iterations chosen so that a trial lasts about trial_time_ms
    (OSU-style; `iters` is then unused, each row's iters column holds the chosen count)."""
    trial_time_ms: float = 50.0
    """--trial-time: what one trial should last under iters_auto."""
    precision: float = 0.0
    """--precision as a share (0.02: 2 %): trials are added until the p50's 99 % confidence
    interval is within +-precision of it at 3 looks in a row (stats/stopping.py), or max_trials
    or budget_s is reached; 0: exactly `trials` trials."""
    max_trials: int = 50
    """--max-trials: under precision, at most this many trials per measurement (--trials too)."""
    budget_s: float = 10.0
    """--budget: under precision, no trial is added after this many seconds of a measurement."""
    nccl_trace: bool = False
    """--nccl-trace: workers log NCCL's TUNING lines; rows get nccl_algo, nccl_proto,
    nccl_nchannels (comm/nccl_trace.py). Nothing is logged on gloo."""
    trial_order: str = "sequential"
    """--order: sequential (each measurement's trials back to back), grouped (round t runs trial
    t of each of GROUP consecutive measurements, then the next group) or interleaved (after every
    measurement's warm-up, round t runs trial t of each in turn; comm/interleave.py)."""
    api: tuple[str, ...] = ("c10d",)
    """--api: c10d, functional or compiled:BACKEND (comm/api.py), each a case of its own; the
    rows' api column. A spec of 0.2.0 holds one as text, read as a tuple of it."""
    cuda_graph: int = 0
    """--cuda-graph: replays of a CUDA graph of `iters` ops per trial (comm/graph.py); 0: none."""
    buffers: str = "regular"
    """--buffers: regular, or symmetric memory (comm/symmetric.py); the rows' buffers column."""

    kind = "comm"

    def __post_init__(self) -> None:
        if isinstance(self.api, str):  # spec.json of 0.2.0: one api
            object.__setattr__(self, "api", (self.api,))
        if not self.primitives:
            raise UsageError("no primitive to measure")
        if not self.sizes or min(self.sizes) < 1:
            raise UsageError("sizes must be positive byte counts")
        check_known(self.dtypes, DTYPES, "dtype")
        check_known((self.op,), OPS, "op")
        check_known(self.modes, MODES, "mode")
        check_minimums(
            ("--iters", self.iters, 1), ("--warmup", self.warmup, 0), ("--trials", self.trials, 1)
        )
        if not 0 <= self.precision < 1 or self.max_trials < 1 or self.budget_s <= 0:
            raise UsageError("--precision, --max-trials and --budget must be positive")
        if self.trial_order not in TRIAL_ORDERS:
            raise UsageError(f"--order must be one of {', '.join(TRIAL_ORDERS)}")
        if self.trial_order == "interleaved" and self.precision:
            raise UsageError("--precision needs --order sequential or grouped")
        if self.trial_time_ms <= 0:
            raise UsageError(f"--trial-time must be positive, got {self.trial_time_ms} ms")


def comm_plan_size(workload: CommSpec, world_size: int) -> int:
    """Rows one launch of `workload` writes: the CLI's progress total."""
    cases = sum(
        FACTS[name].case_count(world_size, workload.root, workload.options)
        for name in workload.primitives
    )
    points = len(workload.api) * len(workload.dtypes) * len(workload.modes) * len(workload.sizes)
    return cases * points
