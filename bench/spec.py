"""What to run, as frozen dataclasses: the CLI builds a RunSpec, writes it to the run directory as
JSON, and every torchrun worker reads that one file (torchrun never sees our flags).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from distbench.collectors.schema import SPEC_JSON
from distbench.parse import BACKENDS, DEVICES, DTYPES, MODES, OPS, UsageError
from distbench.primitives.facts import FACTS


def check_known(values: Iterable[str], known: Sequence[str], what: str) -> None:
    """Each value one of `known`, else one line naming it and the choices (a spec read from a
    file or built by a test, past the CLI's parsers)."""
    for value in values:
        if value not in known:
            raise UsageError(f"unknown {what} '{value}': choose one of {', '.join(known)}")


def check_minimums(*checks: tuple[str, float, float]) -> None:
    """(option, value, minimum) each: a value below its minimum is one line naming the option."""
    for name, value, minimum in checks:
        if value < minimum:
            raise UsageError(f"{name} must be at least {minimum}, got {value}")


@dataclass(frozen=True, kw_only=True)
class Repeats:
    """How a workload of single measurements (pairs, overlap) repeats each one: its modes, ops
    per trial, untimed ops and trials, as CommSpec's fields of the same names."""

    modes: tuple[str, ...] = ("throughput",)
    iters: int = 10
    """Throughput: ops per timed trial. Latency: isolated ops per trial, each a sample."""
    warmup: int = 3
    trials: int = 5
    tag: str = ""
    """Prefix of measurement ids when one run directory holds several specs (--env combos)."""

    def check_repeats(self) -> None:
        check_known(self.modes, MODES, "mode")
        check_minimums(("--iters", self.iters, 1), ("--trials", self.trials, 1))
        check_minimums(("--warmup", self.warmup, 0))


@dataclass(frozen=True)
class LaunchSpec:
    """Where and how the process groups run."""

    backend: str
    """gloo or nccl (auto is resolved by the CLI before the spec is built)."""
    device: str
    """cpu or cuda; with cuda each rank uses the GPU of its LOCAL_RANK."""
    world_sizes: tuple[int, ...]
    """World sizes measured: one launch of the largest, smaller ones on subgroups (see plan.py),
    or one launch each with separate_launches."""
    run_dir: str
    run_id: str
    label: str = ""
    timeout_s: float = 300.0
    """Collective timeout handed to init_process_group, and the CLI's heartbeat watchdog: a rank
    silent this long fails the run."""
    nnodes: int = 1
    nproc_per_node: int = 0
    """Ranks per node when nnodes > 1 (0 on one node: the launch's world size)."""
    node_rank: int = -1
    """This node's rank (static rendezvous: node 0 holds global rank 0); -1: c10d assigns it."""
    rdzv_endpoint: str = ""
    """HOST:PORT of the rendezvous; empty on one node (torchrun --standalone)."""
    rdzv_id: str = ""
    """Rendezvous id shared by every node of one run."""
    separate_launches: bool = False
    """One torchrun launch per world size instead of subgroups of one launch."""
    done: tuple[str, ...] = ()
    """Measurement ids already in results.csv, skipped (a resumed run); filled in by the worker."""
    env: tuple[str, ...] = ()
    """`NAME=VALUE` settings of this launch's workers only (one combination of --env), also the
    rows' env column."""
    rank_samples: str = "off"
    """--rank-samples: off, node or all: where every rank's raw samples go at the end of a
    launch (collectors/rank_samples.py); samples.csv keeps the rank -1 samples in every case."""

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS or self.backend == "auto":
            raise UsageError(f"backend must be gloo or nccl, got '{self.backend}'")
        if self.device not in DEVICES or self.device == "auto":
            raise UsageError(f"device must be cpu or cuda, got '{self.device}'")
        if self.backend == "nccl" and self.device != "cuda":
            raise UsageError("--backend nccl needs --device cuda: NCCL moves GPU memory only")
        if not self.world_sizes or min(self.world_sizes) < 1:
            raise UsageError(f"world sizes must be at least 1, got {list(self.world_sizes)}")
        if self.timeout_s <= 0:
            raise UsageError(f"--timeout must be positive seconds, got {self.timeout_s}")
        if self.nnodes > 1 and (not self.rdzv_endpoint or self.nproc_per_node < 1):
            raise UsageError("--nnodes above 1 needs --rdzv-endpoint and --nproc-per-node")
        if self.nnodes > 1 and max(self.world_sizes) > self.nnodes * self.nproc_per_node:
            raise UsageError(
                f"world size {max(self.world_sizes)} exceeds --nnodes x --nproc-per-node = "
                f"{self.nnodes * self.nproc_per_node}"
            )


TRIAL_ORDERS = ("sequential", "interleaved")
"""How one launch orders its trials (CommSpec.trial_order, the trial_order column)."""


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
    """--precision as a share (0.02: 2 %): trials are added until the p50's 95 % confidence
    interval is within +-precision of it, or max_trials or budget_s is reached; 0: exactly
    `trials` trials."""
    max_trials: int = 50
    """--max-trials: under precision, at most this many trials per measurement (--trials too)."""
    budget_s: float = 10.0
    """--budget: under precision, no trial is added after this many seconds of a measurement."""
    nccl_trace: bool = False
    """--nccl-trace: workers log NCCL's TUNING lines; rows get nccl_algo, nccl_proto,
    nccl_nchannels (comm/nccl_trace.py). Nothing is logged on gloo."""
    trial_order: str = "sequential"
    """--order: sequential (each measurement's trials back to back) or interleaved (after every
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
            raise UsageError("--precision needs --order sequential")
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


@dataclass(frozen=True)
class RunSpec:
    """One run: a launch description plus the workload each launch executes."""

    launch: LaunchSpec
    workload: Any
    """A CommSpec (or another workload dataclass with a `kind` registered in
    workloads.WORKLOADS)."""

    @property
    def kind(self) -> str:
        return str(self.workload.kind)

    @property
    def env_label(self) -> str:
        """The --env combination the launch's workers run with, `NAME=V ...`; empty without."""
        return " ".join(self.launch.env)

    @property
    def run_columns(self) -> dict[str, str]:
        """The columns every row of the run takes from its launch: run_id, label, backend and
        env (the --env combination its workers ran with)."""
        launch = self.launch
        return {
            "run_id": launch.run_id,
            "label": launch.label,
            "backend": launch.backend,
            "env": self.env_label,
        }

    def to_json(self) -> str:
        body = {"kind": self.kind, "launch": asdict(self.launch), "workload": asdict(self.workload)}
        return json.dumps(body, indent=2)

    def save(self, run_dir: Path) -> Path:
        path = run_dir / SPEC_JSON
        path.write_text(self.to_json())
        return path


def as_tuples(data: dict[str, Any]) -> dict[str, Any]:
    """JSON lists back to the tuples the frozen dataclasses declare."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}


def measurement_id(world_size: int, index: int, tag: str = "") -> str:
    """The key joining a results row to its samples: `[tag]ws<N>/i<k>`, k counting the plan's
    cases in order (what --resume matches on)."""
    return f"{tag}ws{world_size}/i{index}"
