"""The CLI's options, defined once: every command that launches groups lists the launch options,
every primitive command the comm options. All values arrive as strings and are parsed by
distbench.parse, so a bad value gets distbench's one-line error rather than a framework box."""

from __future__ import annotations

import copy
from typing import Annotated, Any, get_args

import typer

from distbench.primitives.facts import ROOTED

# Launch options (every command that starts torchrun).
Backend = Annotated[str, typer.Option(help="gloo, nccl, or auto (nccl when GPUs are present).")]
Device = Annotated[str, typer.Option(help="cpu, cuda, or auto (cuda for nccl).")]
WorldSizes = Annotated[
    str | None,
    typer.Option(help="Ranks per launch, e.g. 2,4 [default: local GPUs for nccl, 2 for gloo]."),
]
Out = Annotated[
    str | None, typer.Option(help="New run directory [default: results/<UTC time>-<name>].")
]
Label = Annotated[str, typer.Option(help="Free label stored in every row and the directory name.")]
Timeout = Annotated[
    str,
    typer.Option(help="Seconds a rank may stay silent or a collective stuck before the run fails."),
]
Nnodes = Annotated[
    str | None,
    typer.Option(help="Nodes in the run; run the same command on each [default: 1, or Slurm's]."),
]
NodeRank = Annotated[
    str | None,
    typer.Option(help="This node's rank; fixes node 0 as the writer [default: c10d assigns]."),
]
NprocPerNode = Annotated[
    str | None,
    typer.Option(help="Ranks per node [default: local GPUs for cuda, 1 for cpu on several nodes]."),
]
RdzvEndpoint = Annotated[
    str | None, typer.Option(help="HOST:PORT of the rendezvous, the same on every node.")
]
RdzvId = Annotated[str | None, typer.Option(help="Rendezvous id, the same on every node.")]
SeparateLaunches = Annotated[
    bool,
    typer.Option(
        "--separate-launches",
        help="One torchrun launch per world size instead of subgroups of the largest.",
    ),
]
Resume = Annotated[
    str | None,
    typer.Option(help="Continue the interrupted run in this directory (its spec, its options)."),
]

# Communication options (every primitive command and sweep).
Sizes = Annotated[
    str | None,
    typer.Option(
        "--sizes", "-s", help="Comma list, binary suffixes K/M/G (1K = 1024 B), e.g. 1K,1M,64M."
    ),
]
MinSize = Annotated[str | None, typer.Option(help="Ladder start [default 1K].")]
MaxSize = Annotated[str | None, typer.Option(help="Ladder end [default 64M on gloo, 1G on nccl].")]
Factor = Annotated[str | None, typer.Option(help="Ladder step factor [default 4].")]
Dtype = Annotated[
    str,
    typer.Option(
        help="float32, bfloat16, float16, float64, int8, uint8, int32, int64; a comma list sweeps."
    ),
]
Op = Annotated[
    str | None,
    typer.Option(
        help="Reduction: sum, prod, max, min, avg [default sum]; reducing primitives only."
    ),
]
Mode = Annotated[
    str, typer.Option(help="throughput (back-to-back ops), latency (each op isolated), or both.")
]
Iters = Annotated[str, typer.Option(help="Ops per timed trial (latency: samples per trial).")]
Warmup = Annotated[str, typer.Option(help="Untimed ops before each measurement.")]
Trials = Annotated[str, typer.Option(help="Timed trials per measurement.")]
Check = Annotated[bool, typer.Option("--check", help="Verify results bit-exactly after timing.")]

# Training-step options (distbench ddp).
Model = Annotated[str, typer.Option(help="mlp or transformer (synthetic data, seeded).")]
Width = Annotated[
    str | None, typer.Option(help="Hidden width / d_model [default: 256 mlp, 128 transformer].")
]
Depth = Annotated[
    str | None, typer.Option(help="Layers (mlp: Linear layers) [default: 4 mlp, 2 transformer].")
]
Params = Annotated[
    str | None,
    typer.Option(help="Target parameter count, decimal K/M/G (e.g. 10M): picks the width."),
]
Strategies = Annotated[
    str,
    typer.Option(
        help="Comma list or 'all': ddp, ddp-nocomm, ddp-nooverlap, ddp-bf16, ddp-fp16, grad-avg, "
        "grad-avg-flat, param-avg."
    ),
]
Steps = Annotated[str, typer.Option(help="Timed training steps per strategy.")]
WarmupSteps = Annotated[str, typer.Option("--warmup", help="Untimed steps before the timed ones.")]
WindowSteps = Annotated[
    str,
    typer.Option(
        help="Timed steps per window between barriers; a window is one sample (the slowest "
        "rank's window / steps). 'auto': at least 10 windows (20 steps: windows of 2)."
    ),
]
BatchSize = Annotated[str, typer.Option(help="Samples per rank per step.")]
BucketMb = Annotated[
    str, typer.Option(help="DDP bucket_cap_mb; a comma list sweeps it, e.g. 1,5,25.")
]
GradientAsBucketView = Annotated[
    bool, typer.Option("--gradient-as-bucket-view", help="DDP gradient_as_bucket_view=True.")
]
StaticGraph = Annotated[bool, typer.Option("--static-graph", help="DDP static_graph=True.")]
AvgEvery = Annotated[
    str, typer.Option(help="param-avg: average parameters every K optimizer steps (1 = every).")
]
Seed = Annotated[str, typer.Option(help="Seed of the initial weights and the data.")]

# Compare and baseline options (distbench compare, distbench baseline ...).
Metric = Annotated[
    str,
    typer.Option(
        help="time_us_p50 (median), time_us_mean/min/max/p95/p99, busbw_GBps, algbw_GBps, "
        "samples_per_s (DDP)."
    ),
]
Threshold = Annotated[
    str,
    typer.Option(
        help="How much worse counts: 5% (of the baseline) or an amount with its unit (20us, "
        "2GB/s); METRIC:5% also picks the metric (median:5%). A bare number is refused."
    ),
]
ThresholdsFile = Annotated[
    str | None,
    typer.Option("--thresholds", help="TOML file of per-primitive / size-band thresholds."),
]
Alpha = Annotated[
    str, typer.Option(help="Significance of the rank test that separates a change from noise.")
]
NoiseTest = Annotated[
    bool,
    typer.Option("--noise-test/--no-noise-test", help="Require the samples to differ (rank test)."),
]
CompareFormat = Annotated[
    str, typer.Option("--format", help="table, markdown (CI job summaries) or json.")
]
Store = Annotated[
    str | None,
    typer.Option(help="Baseline folder [default: $DISTBENCH_BASELINES, else ./baselines]."),
]
Fdr = Annotated[
    bool,
    typer.Option(
        "--fdr/--no-fdr",
        help="Benjamini-Hochberg across the rows: alpha bounds the false discovery rate, not "
        "each row's p.",
    ),
]
MinSamples = Annotated[
    str,
    typer.Option(
        help="Independent samples (trials; DDP windows) per side below which the rank test does "
        "not vote and the threshold alone decides."
    ),
]
Adjacent = Annotated[
    bool,
    typer.Option(
        "--adjacent/--any-size",
        help="A regression must show at two adjacent sizes of a case (one size: unconfirmed).",
    ),
]
AllowMissing = Annotated[
    bool,
    typer.Option(
        "--allow-missing",
        help="Rows of the baseline missing from the current run do not fail (else exit 4).",
    ),
]
Force = Annotated[bool, typer.Option("--force", help="Replace a baseline of that name.")]
CompareSave = Annotated[
    list[str] | None,
    typer.Option(
        "--save",
        help="Also write the verdict to FILE (.md markdown, .json, else table); repeatable.",
    ),
]

# Report options (distbench report).
ReportRuns = Annotated[
    list[str],
    typer.Argument(
        help="Run directories, or folders of them (searched recursively).", metavar="RUN_DIR"
    ),
]
ReportOut = Annotated[
    str | None,
    typer.Option(
        "--out",
        help="Report folder [default: RUN_DIR/report for one argument, ./report for several].",
    ),
]
ReportBy = Annotated[
    str,
    typer.Option(
        "--by",
        help="Compare runs by label, host or run [default auto: label, else host, else run].",
    ),
]

# Primitive-specific options (issue 3): shown by --help only on the commands they apply to.
Root = Annotated[
    str | None,
    typer.Option(help="broadcast/reduce root rank, or 'all' to measure every root in turn [0]."),
]
Pairs = Annotated[
    str | None,
    typer.Option(help="sendrecv pairs SRC:DST (comma list), or 'all' ordered pairs [0:1]."),
]
Pattern = Annotated[
    str | None,
    typer.Option(help="sendrecv: pingpong, window, ring (comma list, or all) [pingpong,window]."),
]
Window = Annotated[
    str | None,
    typer.Option(help="sendrecv: messages in flight per window [64; above 1M, 64M / size]."),
]
Bidirectional = Annotated[
    bool,
    typer.Option("--bidirectional", help="sendrecv window: both ranks send at once (osu_bibw)."),
]
Primitives = Annotated[
    str | None,
    typer.Option(help="sweep: comma list of commands, e.g. allreduce,broadcast,sendrecv, or all."),
]
Config = Annotated[
    str | None,
    typer.Option(help="sweep: a TOML matrix of backends, world sizes, primitives, sizes, dtypes."),
]
PRIMITIVE_OPTIONS = {
    "root": Root,
    "pairs": Pairs,
    "pattern": Pattern,
    "window": Window,
    "bidirectional": Bidirectional,
    "primitives": Primitives,
    "config": Config,
}
"""Parameter name -> option, for hiding the ones a command does not take."""


def hidden(option: Any) -> Any:
    """The same option, left out of --help (it is still parsed, and refused with one line)."""
    base, info = get_args(option)
    info = copy.copy(info)
    info.hidden = True
    return Annotated[base, info]


def hidden_options(primitive: str) -> list[str]:
    """Parameters that `distbench <command> --help` leaves out for a primitive (torch name, or
    `sweep`): those that do not apply to it. Torch-free, so `distbench --help` stays fast."""
    if primitive == "sweep":
        return []
    hidden = ["primitives", "config"]
    if primitive not in ROOTED:
        hidden.append("root")
    if primitive != "send_recv":
        hidden += ["pairs", "pattern", "window", "bidirectional"]
    return hidden
