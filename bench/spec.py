"""What to run, as frozen dataclasses: the CLI builds a RunSpec, writes it to the run directory as
JSON, and every torchrun worker reads that one file (torchrun never sees our flags).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from distbench.collectors.schema import SPEC_JSON
from distbench.parse import BACKENDS, DEVICES, MODES, UsageError


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


@dataclass(frozen=True)
class RunSpec:
    """One run: a launch description plus the workload each launch executes."""

    launch: LaunchSpec
    workload: Any
    """A workload dataclass (comm/spec.py CommSpec, ddp/spec.py DdpSpec ...) whose `kind` is
    registered in workloads.WORKLOADS."""

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


def measurement_index(measurement: str, world_size: int, tag: str = "") -> int | None:
    """k of a `[tag]ws<N>/i<k>` id of this world size and tag (measurement_id's inverse); None
    for another world size or tag, or an id of another form."""
    head = f"{tag}ws{world_size}/i"
    index = measurement[len(head) :] if measurement.startswith(head) else ""
    return int(index) if index.isdigit() else None
