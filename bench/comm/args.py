"""The options every primitive command shares (sizes, dtypes, op, mode, iterations), as typed, and
the CommSpec built from them: each bad value is one UsageError line (exit 2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from distbench.cli.args import ResolvedLaunch
from distbench.parse import (
    DTYPE_BYTES,
    OPS,
    UsageError,
    build_size_ladder,
    parse_choice,
    parse_dtypes,
    parse_int,
    parse_modes,
    parse_size,
    parse_sizes,
)
from distbench.spec import CommSpec

DEFAULT_LADDER = {"gloo": ("1K", "64M", 4), "nccl": ("1K", "1G", 4)}
"""--min-size, --max-size, --factor when no sizes are given: laptop-sized on gloo."""

INT_DTYPES = ("int8", "uint8", "int32", "int64")


def resolve_sizes(
    sizes: str | None, min_size: str | None, max_size: str | None, factor: str | None, backend: str
) -> list[int]:
    if sizes is not None:
        if min_size or max_size or factor:
            raise UsageError("give either --sizes or --min-size/--max-size/--factor, not both")
        return parse_sizes(sizes)
    low, high, step = DEFAULT_LADDER[backend]
    return build_size_ladder(
        parse_size(min_size or low),
        parse_size(max_size or high),
        parse_int(factor, "--factor", minimum=2) if factor else step,
    )


def check_dtypes(dtypes: list[str], op: str, sizes: list[int]) -> None:
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


@dataclass(frozen=True)
class CommArgs:
    """Options of every communication-primitive command, as typed."""

    sizes: str | None = None
    min_size: str | None = None
    max_size: str | None = None
    factor: str | None = None
    dtype: str = "float32"
    op: str = "sum"
    mode: str = "throughput"
    iters: str = "20"
    warmup: str = "5"
    trials: str = "5"
    check: bool = False


def build_comm_spec(
    primitives: tuple[str, ...],
    args: CommArgs,
    launch: ResolvedLaunch,
    root: str = "0",
    options: dict[str, Any] | None = None,
) -> CommSpec:
    """The workload of a primitive command, every value parsed and checked."""
    sizes = resolve_sizes(args.sizes, args.min_size, args.max_size, args.factor, launch.backend)
    dtypes = parse_dtypes(args.dtype)
    op = parse_choice(args.op, OPS, "op")
    check_dtypes(dtypes, op, sizes)
    return CommSpec(
        primitives=primitives,
        sizes=tuple(sizes),
        dtypes=tuple(dtypes),
        op=op,
        modes=tuple(parse_modes(args.mode)),
        iters=parse_int(args.iters, "--iters"),
        warmup=parse_int(args.warmup, "--warmup", minimum=0),
        trials=parse_int(args.trials, "--trials"),
        check=args.check,
        root=root,
        options=dict(options or {}),
    )
