"""The CLI's options, defined once: every command that launches groups lists the launch options,
every primitive command the comm options. All values arrive as strings and are parsed by
distbench.parse, so a bad value gets distbench's one-line error rather than a framework box."""

from __future__ import annotations

from typing import Annotated

import typer

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
Timeout = Annotated[str, typer.Option(help="Seconds before a stuck collective fails the run.")]

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
Op = Annotated[str, typer.Option(help="Reduction: sum, prod, max, min, avg.")]
Mode = Annotated[
    str, typer.Option(help="throughput (back-to-back ops), latency (each op isolated), or both.")
]
Iters = Annotated[str, typer.Option(help="Ops per timed trial (latency: samples per trial).")]
Warmup = Annotated[str, typer.Option(help="Untimed ops before each measurement.")]
Trials = Annotated[str, typer.Option(help="Timed trials per measurement.")]
Check = Annotated[bool, typer.Option("--check", help="Verify results bit-exactly after timing.")]
