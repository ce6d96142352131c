"""The `ddp` workload: which model, which strategies, how many steps. A frozen dataclass the CLI
builds and every rank reads from spec.json (kind `ddp` in spec.WORKLOADS).

Pure Python: the CLI imports it without torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from distbench.parse import UsageError

MODELS = ("mlp", "transformer")

STRATEGIES = (
    "ddp",
    "ddp-nocomm",
    "ddp-bf16",
    "ddp-fp16",
    "grad-avg",
    "grad-avg-flat",
    "param-avg",
)
"""Every strategy, in the order the README lists them."""

DDP_STRATEGIES = ("ddp", "ddp-nocomm", "ddp-bf16", "ddp-fp16")
"""Strategies that wrap the model in DistributedDataParallel."""

BUCKET_SWEPT = ("ddp", "ddp-bf16", "ddp-fp16")
"""DDP strategies that communicate: one row per --bucket-mb value. ddp-nocomm (nothing to bucket
for the wire) runs once, with the first bucket size."""

BASELINES = ("ddp", "ddp-nocomm", "grad-avg")
"""Run first, in this order: ddp (first bucket size) is the reference for max_param_diff,
ddp-nocomm and grad-avg are the baselines of comm_share, comm_busbw_GBps and overlap."""

TRANSFORMER_HEADS = 4
"""Attention heads of the transformer; its width must be a multiple."""

DEFAULT_SHAPE = {"mlp": (256, 4), "transformer": (128, 2)}
"""(width, depth) when not given: a step takes milliseconds on a laptop core."""


@dataclass(frozen=True)
class StrategyRun:
    """One measurement of a launch: a strategy with its bucket size (DDP strategies)."""

    strategy: str
    bucket_mb: float | None
    """bucket_cap_mb for DDP strategies, None for manual ones."""


@dataclass(frozen=True)
class DdpSpec:
    """Training steps of one synthetic model under each communication strategy."""

    strategies: tuple[str, ...] = STRATEGIES
    model: str = "mlp"
    """mlp (depth-1 hidden Linear+ReLU layers of `width`, then Linear(width, classes)) or
    transformer (nn.TransformerEncoder, d_model = width, `depth` layers, 4 heads, FFN 4 x width)."""
    width: int = 256
    depth: int = 4
    batch_size: int = 32
    """Samples per rank per step."""
    seq_len: int = 32
    """Tokens per sample (transformer only)."""
    classes: int = 10
    steps: int = 20
    """Timed steps per strategy."""
    warmup: int = 5
    """Untimed steps before the timed ones (they train too: every strategy runs warmup + steps)."""
    bucket_mbs: tuple[float, ...] = (25.0,)
    """DDP bucket_cap_mb values; more than one sweeps it."""
    gradient_as_bucket_view: bool = False
    static_graph: bool = False
    avg_every: int = 1
    """param-avg averages parameters after every K-th optimizer step (K = 1: every step)."""
    lr: float = 0.01
    """Plain SGD (no momentum, no weight decay): the manual strategies must match DDP exactly."""
    seed: int = 0
    """Seeds the initial weights (identical for every strategy and rank) and the data."""
    dtype: str = "float32"

    kind = "ddp"

    def __post_init__(self) -> None:
        if not self.strategies:
            raise UsageError("no strategy to measure: give e.g. --strategies ddp,grad-avg")
        for name in self.strategies:
            if name not in STRATEGIES:
                raise UsageError(f"unknown strategy '{name}': choose from {', '.join(STRATEGIES)}")
        if len(set(self.strategies)) != len(self.strategies):
            raise UsageError(f"strategies repeat: {','.join(self.strategies)}")
        if self.model not in MODELS:
            raise UsageError(f"unknown model '{self.model}': choose one of {', '.join(MODELS)}")
        for name, value, minimum in (
            ("--width", self.width, 1),
            ("--depth", self.depth, 1),
            ("--batch-size", self.batch_size, 1),
            ("sequence length", self.seq_len, 1),
            ("classes", self.classes, 2),
            ("--steps", self.steps, 1),
            ("--warmup", self.warmup, 0),
            ("--avg-every", self.avg_every, 1),
        ):
            if value < minimum:
                raise UsageError(f"{name} must be at least {minimum}, got {value}")
        if self.model == "transformer" and self.width % TRANSFORMER_HEADS:
            raise UsageError(
                f"--width {self.width}: the transformer's width must be a multiple of "
                f"{TRANSFORMER_HEADS} (its attention heads), e.g. {self.width // 4 * 4 or 4}"
            )
        if not self.bucket_mbs or min(self.bucket_mbs) <= 0:
            raise UsageError(f"--bucket-mb must be positive MB, got {list(self.bucket_mbs)}")
        if self.lr <= 0:
            raise UsageError(f"learning rate must be positive, got {self.lr}")
        if self.dtype != "float32":
            raise UsageError(f"the ddp workload trains in float32 only, got '{self.dtype}'")

    def runs(self) -> list[StrategyRun]:
        """Every measurement of one launch, in execution order: the baselines first."""
        ordered = [s for s in BASELINES if s in self.strategies]
        ordered += [s for s in STRATEGIES if s in self.strategies and s not in BASELINES]
        runs: list[StrategyRun] = []
        for strategy in ordered:
            if strategy in BUCKET_SWEPT:
                runs += [StrategyRun(strategy, mb) for mb in self.bucket_mbs]
            elif strategy in DDP_STRATEGIES:
                runs.append(StrategyRun(strategy, self.bucket_mbs[0]))
            else:
                runs.append(StrategyRun(strategy, None))
        return runs


def plan_size(workload: object, world_size: int) -> int:
    """Rows one launch of a DdpSpec writes: the CLI's progress total."""
    assert isinstance(workload, DdpSpec)
    return len(workload.runs())
