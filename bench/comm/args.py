"""The options every primitive command shares (sizes, dtypes, op, mode, iterations): CommArgs,
each value parsed by its option, and the CommSpec built from them, the combinations checked: each
bad value is one line (exit 2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from distbench.cli.args import ResolvedLaunch
from distbench.cli.options import choice, flag, integer, text
from distbench.parse import (
    DTYPE_BYTES,
    OPS,
    UsageError,
    build_size_ladder,
    parse_dtypes,
    parse_modes,
    parse_size,
    parse_sizes,
)
from distbench.primitives.facts import FACTS
from distbench.spec import CommSpec

DEFAULT_LADDER = {"gloo": (1 << 10, 64 << 20, 4), "nccl": (1 << 10, 1 << 30, 4)}
"""--min-size, --max-size, --factor when no sizes are given: laptop-sized on gloo."""

INT_DTYPES = ("int8", "uint8", "int32", "int64")


@dataclass(frozen=True)
class CommArgs:
    """Options of every communication-primitive command (and sweep)."""

    sizes: Annotated[
        tuple[int, ...] | None,
        text(
            "Comma list, binary suffixes K/M/G (1K = 1024 B), e.g. 1K,1M,64M.",
            lambda value: tuple(parse_sizes(value)),
            "--sizes",
            "-s",
        ),
    ] = None
    min_size: Annotated[int | None, text("Ladder start [default 1K].", parse_size)] = None
    max_size: Annotated[
        int | None, text("Ladder end [default 64M on gloo, 1G on nccl].", parse_size)
    ] = None
    factor: Annotated[int | None, integer("Ladder step factor [default 4].", minimum=2)] = None
    dtype: Annotated[
        tuple[str, ...],
        text(
            "float32, bfloat16, float16, float64, int8, uint8, int32, int64; a comma list sweeps.",
            lambda value: tuple(parse_dtypes(value)),
        ),
    ] = ("float32",)
    op: Annotated[
        str | None,
        choice(
            "Reduction: sum, prod, max, min, avg [default sum]; reducing primitives only.",
            OPS,
            "op",
        ),
    ] = None
    mode: Annotated[
        tuple[str, ...],
        text(
            "throughput (back-to-back ops), latency (each op isolated), or both.",
            lambda value: tuple(parse_modes(value)),
        ),
    ] = ("throughput",)
    iters: Annotated[int, integer("Ops per timed trial (latency: samples per trial).")] = 20
    warmup: Annotated[int, integer("Untimed ops before each measurement.", minimum=0)] = 5
    trials: Annotated[int, integer("Timed trials per measurement.")] = 5
    check: Annotated[bool, flag("Verify results bit-exactly after timing.", "--check")] = False


def check_op(primitive: str, op: str | None) -> None:
    """--op where nothing is reduced is refused (a primitive command; a sweep lets it pass)."""
    if op is not None and not FACTS[primitive].reduces:
        raise UsageError(
            f"--op applies to reducing primitives (allreduce, reduce, reducescatter); "
            f"{FACTS[primitive].command} moves data unchanged: drop --op"
        )


def resolve_sizes(args: CommArgs, backend: str) -> list[int]:
    if args.sizes is not None:
        if args.min_size or args.max_size or args.factor:
            raise UsageError("give either --sizes or --min-size/--max-size/--factor, not both")
        return list(args.sizes)
    low, high, step = DEFAULT_LADDER[backend]
    return build_size_ladder(args.min_size or low, args.max_size or high, args.factor or step)


def check_dtypes(dtypes: tuple[str, ...], op: str, sizes: list[int]) -> None:
    for dtype in dtypes:
        if op == "avg" and dtype in INT_DTYPES:
            raise UsageError(
                f"--op avg cannot reduce {dtype} (an integer type): use sum, or a float"
            )
        itemsize = DTYPE_BYTES[dtype]
        if min(sizes) < itemsize:
            raise UsageError(
                f"size {min(sizes)} B is smaller than one {dtype} element ({itemsize} B): "
                f"use sizes of at least {itemsize}"
            )


def build_comm_spec(
    primitives: tuple[str, ...],
    args: CommArgs,
    launch: ResolvedLaunch,
    root: str = "0",
    options: dict[str, Any] | None = None,
) -> CommSpec:
    """The workload of a primitive command, the sizes resolved and the dtypes checked."""
    sizes = resolve_sizes(args, launch.backend)
    op = args.op or "sum"
    check_dtypes(args.dtype, op, sizes)
    return CommSpec(
        primitives=primitives,
        sizes=tuple(sizes),
        dtypes=args.dtype,
        op=op,
        modes=args.mode,
        iters=args.iters,
        warmup=args.warmup,
        trials=args.trials,
        check=args.check,
        root=root,
        options=dict(options or {}),
    )
