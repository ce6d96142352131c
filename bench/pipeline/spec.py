"""The `pipeline` workload (kind `pipeline` in workloads.WORKLOADS): the synthetic models of
`distbench ddp` split into W stages, one per rank, balanced by parameter count, trained with
GPipe-style microbatching by torch.distributed.pipelining or by hand (isend/irecv).

Pure Python: the CLI imports it without torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

from distbench.ddp.spec import DdpSpec, TrainingSpec
from distbench.parse import UsageError

STRATEGIES = ("sendrecv", "pipelining", "pipelining-1f1b")
"""sendrecv: GPipe by hand with isend/irecv (the reference); pipelining: PipelineStage with
ScheduleGPipe; pipelining-1f1b: Schedule1F1B."""


def unit_params(model: str, width: int, depth: int, classes: int = 10) -> list[int]:
    """Parameters of each unit a stage is made of, in model order: mlp, (depth - 1) x
    [Linear + ReLU] then the head Linear; transformer, depth encoder layers then the head
    (mean over the sequence + Linear). ddp/params.py param_count is their sum."""
    head = width * classes + classes
    if model == "mlp":
        return [width * width + width] * (depth - 1) + [head]
    return [12 * width * width + 13 * width] * depth + [head]


def partition(counts: Sequence[int], stages: int) -> list[int]:
    """Split `counts` (units in order) into `stages` contiguous, non-empty parts whose largest
    sum is the smallest possible; the parts' first unit indices (the first is 0). Among equal
    maxima the earliest boundaries win."""
    n = len(counts)
    if not 1 <= stages <= n:
        raise ValueError(f"{n} units cannot make {stages} non-empty stages")
    prefix = [0]
    for c in counts:
        prefix.append(prefix[-1] + c)
    inf = float("inf")
    # best[k][i]: the smallest max part sum of units[:i] in k parts; cut[k][i] its last start.
    best = [[inf] * (n + 1) for _ in range(stages + 1)]
    cut = [[0] * (n + 1) for _ in range(stages + 1)]
    best[0][0] = 0
    for k in range(1, stages + 1):
        for i in range(k, n + 1):
            for j in range(k - 1, i):
                value = max(best[k - 1][j], prefix[i] - prefix[j])
                if value < best[k][i]:
                    best[k][i], cut[k][i] = value, j
    starts, i = [], n
    for k in range(stages, 0, -1):
        i = cut[k][i]
        starts.append(i)
    return starts[::-1]


def bubble_theory(stages: int, microbatches: int) -> float:
    """GPipe's idle share of each stage, (W - 1) / (M + W - 1), when every stage takes the same
    time per microbatch and sending is free."""
    return (stages - 1) / (microbatches + stages - 1)


@dataclass(frozen=True)
class PipelineSpec(TrainingSpec):
    """Training steps of one synthetic model split into one stage per rank (ddp's model, as
    ddp/models.py builds it; batch_size is the global batch, a multiple of every M)."""

    strategies: tuple[str, ...] = STRATEGIES
    warmup: int = 2
    """Untimed steps first (at least 1: the library infers the stages' shapes in its first)."""
    microbatches: tuple[int, ...] = (4,)
    """M values: each global batch is cut into M equal microbatches; more than one sweeps it."""

    kind = "pipeline"

    def __post_init__(self) -> None:
        self.check_choices(STRATEGIES, "sendrecv,pipelining")
        if not self.microbatches or min(self.microbatches) < 1:
            raise UsageError(f"--microbatches must be at least 1, got {list(self.microbatches)}")
        if self.warmup < 1:
            raise UsageError(
                f"--warmup must be at least 1, got {self.warmup}: the library's first step "
                "infers the stages' shapes and must not be timed"
            )
        for m in self.microbatches:
            if self.batch_size % m:
                raise UsageError(
                    f"--batch-size {self.batch_size} does not split into {m} equal microbatches: "
                    f"use a multiple of {m} (e.g. {m * max(1, self.batch_size // m)})"
                )
        self.check_shape()

    def model_spec(self) -> DdpSpec:
        """The same model and data as `distbench ddp` builds (batch_size = the global batch)."""
        shared = {f.name: getattr(self, f.name) for f in fields(TrainingSpec)}
        return DdpSpec(**{**shared, "strategies": ("ddp",), "tag": ""})

    def check_world_size(self, world_size: int) -> None:
        """One stage per rank: at least 2 ranks, and no more than the model has units."""
        units = len(unit_params(self.model, self.width, self.depth, self.classes))
        if world_size < 2:
            raise UsageError(f"pipeline needs at least 2 ranks (one stage each), got {world_size}")
        if world_size > units:
            raise UsageError(
                f"world size {world_size} needs {world_size} stages but the {self.model} of "
                f"--depth {self.depth} has {units} units: raise --depth or lower --world-sizes"
            )
        if not self.runs(world_size):
            raise UsageError(
                f"pipelining-1f1b needs --microbatches >= the world size (torch's Schedule1F1B): "
                f"give --microbatches {world_size} or more at world size {world_size}"
            )

    def runs(self, world_size: int) -> list[tuple[str, int]]:
        """Every measurement of one launch, in execution order: (strategy, M). torch's
        Schedule1F1B needs M >= W: pipelining-1f1b is left out at smaller M."""
        return [
            (s, m)
            for m in self.microbatches
            for s in self.strategies
            if s != "pipelining-1f1b" or m >= world_size
        ]


def plan_size(workload: object, world_size: int) -> int:
    """Rows one launch of a PipelineSpec writes."""
    assert isinstance(workload, PipelineSpec)
    return len(workload.runs(world_size))
