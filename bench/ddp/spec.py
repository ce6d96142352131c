"""The `ddp` workload: which model, which strategies, how many steps. A frozen dataclass the CLI
builds and every rank reads from spec.json (kind `ddp` in workloads.WORKLOADS).

Pure Python: the CLI imports it without torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from distbench.parse import UsageError
from distbench.spec import check_known, check_minimums

MODELS = ("mlp", "transformer")

STRATEGIES = (
    "ddp",
    "ddp-nocomm",
    "ddp-nooverlap",
    "ddp-bf16",
    "ddp-fp16",
    "local",
    "grad-avg",
    "grad-avg-flat",
    "param-avg",
    "fsdp",
    "fsdp-reshard-false",
)
"""Every strategy, in the order the README lists them."""

ONE_PROCESS = ("dp",)
"""nn.DataParallel: one process drives every local GPU. Only when named (never in 'all' or the
default): it needs 2+ CUDA GPUs and --world-sizes 1, its batch split over the GPUs."""

DDP_STRATEGIES = ("ddp", "ddp-nocomm", "ddp-nooverlap", "ddp-bf16", "ddp-fp16")
"""Strategies that wrap the model in DistributedDataParallel."""

BUCKET_SWEPT = ("ddp", "ddp-nooverlap", "ddp-bf16", "ddp-fp16")
"""DDP strategies that communicate: one row per --bucket-mb value. ddp-nocomm (nothing to bucket
for the wire) runs once, with the first bucket size."""

BASELINES = ("ddp", "ddp-nocomm", "ddp-nooverlap", "local")
"""Run first, in this order: ddp (first bucket size) is the reference for max_param_diff,
ddp-nocomm the compute baseline of the DDP strategies' comm_share and comm_busbw_GBps,
ddp-nooverlap (each bucket size) the no-overlap reference of comm_hidden_share, local (the plain
model, nothing sent) the compute baseline of the manual and FSDP strategies'."""

COMM_BASELINE = {
    **{strategy: "ddp-nocomm" for strategy in DDP_STRATEGIES},
    **{s: "local" for s in ("local", "grad-avg", "grad-avg-flat", "param-avg")},
    **{s: "local" for s in ("fsdp", "fsdp-reshard-false")},
}
"""Strategy -> the strategy whose mean step its comm_share and comm_busbw_GBps subtract (the row's
comm_baseline): its own step without communication. DDP's strategies: ddp-nocomm (DDP, its hooks
and buckets, a no-op hook). The manual ones: local, their very step without the all_reduces.
FSDP: local too, the model unsharded; FSDP's own copies into and out of its flat buffers count
with its communication then, and its optimizer step over 1/n of the parameters is shorter than
local's. dp: none (one process, nothing sent between ranks)."""

HIDDEN_SHARE_REFERENCE = {"ddp": "ddp-nooverlap", "ddp-nooverlap": "ddp-nooverlap"}
"""Strategy -> the strategy that sends the same messages (same bucket size) with nothing
overlapped: comm_hidden_share's reference (itself: 0 by definition). Other strategies have none:
the compressed hooks send other bytes; grad-avg, grad-avg-flat and param-avg other messages."""

WINDOWS_WANTED = 10
"""The automatic window length gives at least this many windows (the samples of a rank test)
from this many steps on."""

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
class TrainingSpec:
    """What the training workloads (ddp, pipeline) share: the synthetic model, its data, the
    timed steps and their windows. Each extends it with its strategies and its own settings."""

    strategies: tuple[str, ...] = ()
    model: str = "mlp"
    """mlp (depth-1 hidden Linear+ReLU layers of `width`, then Linear(width, classes)) or
    transformer (nn.TransformerEncoder, d_model = width, `depth` layers, 4 heads, FFN 4 x width)."""
    width: int = 256
    depth: int = 4
    batch_size: int = 32
    """Samples per step: per rank (ddp); the global batch, all microbatches together (pipeline)."""
    seq_len: int = 32
    """Tokens per sample (transformer only)."""
    classes: int = 10
    steps: int = 20
    """Timed steps per measurement."""
    warmup: int = 5
    """Untimed steps before the timed ones (they train too: every measurement runs warmup +
    steps)."""
    window_steps: int = 0
    """Timed steps per window: the steps between two barriers, timed as one (a divisor of
    steps). 0 picks the largest divisor of steps that is at most steps // 10 (see
    window_length)."""
    lr: float = 0.01
    """Plain SGD (no momentum, no weight decay): the manual strategies must match DDP exactly."""
    seed: int = 0
    """Seeds the initial weights (identical for every strategy and rank) and the data."""
    tag: str = ""
    """Prefix of measurement ids when one run directory holds several specs (a later --env
    combination's `env<k>/`), keeping them unique; empty otherwise (as CommSpec.tag)."""

    def check_choices(self, known: tuple[str, ...], example: str) -> None:
        """The strategies (at least one, each of `known`) and the model."""
        if not self.strategies:
            raise UsageError(f"no strategy to measure: give e.g. --strategies {example}")
        check_known(self.strategies, known, "strategy")
        check_known((self.model,), MODELS, "model")

    def check_shape(self) -> None:
        """The model's shape, the steps and their windows."""
        check_minimums(
            ("--width", self.width, 1),
            ("--depth", self.depth, 1),
            ("--batch-size", self.batch_size, 1),
            ("sequence length", self.seq_len, 1),
            ("classes", self.classes, 2),
            ("--steps", self.steps, 1),
            ("--warmup", self.warmup, 0),
            ("--window-steps", self.window_steps, 0),
        )
        if self.model == "transformer" and self.width % TRANSFORMER_HEADS:
            raise UsageError(
                f"--width {self.width}: the transformer's width must be a multiple of "
                f"{TRANSFORMER_HEADS} (its attention heads), e.g. {self.width // 4 * 4 or 4}"
            )
        if self.window_steps > self.steps or self.steps % max(self.window_steps, 1):
            fits = [d for d in range(1, self.steps + 1) if self.steps % d == 0][:6]
            raise UsageError(
                f"--window-steps {self.window_steps} does not divide --steps {self.steps} into "
                f"equal windows: use a divisor ({', '.join(map(str, fits))}, ...) or auto"
            )
        if self.lr <= 0:
            raise UsageError(f"learning rate must be positive, got {self.lr}")

    def window_length(self) -> int:
        """Timed steps per window: window_steps, or when 0 the largest divisor of steps that is
        at most steps // WINDOWS_WANTED (20 steps: windows of 2; fewer than 10 steps: of 1)."""
        if self.window_steps:
            return self.window_steps
        longest = max(1, self.steps // WINDOWS_WANTED)
        return max(d for d in range(1, longest + 1) if self.steps % d == 0)


@dataclass(frozen=True)
class DdpSpec(TrainingSpec):
    """Training steps of one synthetic model under each communication strategy."""

    strategies: tuple[str, ...] = STRATEGIES
    bucket_mbs: tuple[float, ...] = (25.0,)
    """DDP bucket_cap_mb values; more than one sweeps it."""
    gradient_as_bucket_view: bool = False
    static_graph: bool = False
    avg_every: int = 1
    """param-avg averages parameters after every K-th optimizer step (K = 1: every step)."""
    dtype: str = "float32"

    kind = "ddp"

    def __post_init__(self) -> None:
        self.check_choices((*STRATEGIES, *ONE_PROCESS), "ddp,grad-avg")
        if len(set(self.strategies)) != len(self.strategies):
            raise UsageError(f"strategies repeat: {','.join(self.strategies)}")
        self.check_shape()
        check_minimums(("--avg-every", self.avg_every, 1))
        if not self.bucket_mbs or min(self.bucket_mbs) <= 0:
            raise UsageError(f"--bucket-mb must be positive MB, got {list(self.bucket_mbs)}")
        if self.dtype != "float32":
            raise UsageError(f"the ddp workload trains in float32 only, got '{self.dtype}'")

    def runs(self) -> list[StrategyRun]:
        """Every measurement of one launch, in execution order: the baselines first."""
        ordered = [s for s in BASELINES if s in self.strategies]
        known = (*STRATEGIES, *ONE_PROCESS)
        ordered += [s for s in known if s in self.strategies and s not in BASELINES]
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
