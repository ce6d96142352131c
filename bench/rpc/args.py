"""`distbench rpc`'s own options (RpcArgs), each parsed by its option, and the RpcSpec built from
them. Torch-free (the CLI process)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from distbench.comm.memory import check_memory
from distbench.options.launch import ResolvedLaunch
from distbench.options.opt import integer, text
from distbench.options.shared import parse_count, sizes_option
from distbench.parse import UsageError, parse_int, parse_sizes
from distbench.rpc.spec import DEFAULT_WINDOW, RPC_PATTERNS, RpcSpec

MAX_WINDOW = 1024
DEFAULT_SIZES = (8, 64 << 10, 1 << 20)


def parse_rpc_patterns(value: str) -> tuple[str, ...]:
    """'sync,async,rref,ps', a subset, or 'all'."""
    if value.strip().lower() == "all":
        return RPC_PATTERNS
    patterns = tuple(dict.fromkeys(p.strip().lower() for p in value.split(",")))
    if not value.strip() or any(p not in RPC_PATTERNS for p in patterns):
        raise UsageError(
            f"--pattern '{value}' is not a comma list of {', '.join(RPC_PATTERNS)} (or all), "
            "e.g. --pattern sync,async"
        )
    return patterns


def parse_rpc_window(value: str) -> int:
    return parse_count(value, "--window", MAX_WINDOW, unit=" calls in flight")


def parse_rpc_sizes(value: str) -> tuple[int, ...]:
    sizes = tuple(parse_sizes(value))
    if min(sizes) < 4:
        raise UsageError(f"--sizes must be at least 4 bytes (one float32), got '{value}'")
    return sizes


@dataclass(frozen=True)
class RpcArgs:
    """Options of `distbench rpc`."""

    pattern: Annotated[
        tuple[str, ...],
        text(
            "sync (rpc_sync echo), async (rpc_async, --window in flight), rref (remote + "
            "to_here), ps (parameter server at rank 0); comma list or all.",
            parse_rpc_patterns,
            default_text="sync,async",
        ),
    ] = ("sync", "async")
    sizes: Annotated[
        tuple[int, ...],
        sizes_option(
            "Tensor bytes per call, comma list, binary suffixes K/M/G [8,64K,1M].",
            parse_rpc_sizes,
            default_text="8,64K,1M",
        ),
    ] = DEFAULT_SIZES
    window: Annotated[
        int | None,
        integer(
            f"async: calls in flight per rank [{DEFAULT_WINDOW}].",
            maximum=MAX_WINDOW,
            parse=parse_rpc_window,
        ),
    ] = None
    iters: Annotated[
        int,
        text(
            "Calls per timed trial (async: windows, ps: steps).",
            lambda value: parse_int(value, "--iters"),
        ),
    ] = 20
    warmup: Annotated[int, integer("Untimed calls before each measurement.", minimum=0)] = 3
    trials: Annotated[int, integer("Timed trials per measurement.")] = 5


def build_rpc_spec(args: RpcArgs, launch: ResolvedLaunch) -> RpcSpec:
    """The spec of one launch, every combination of options checked (one line, exit 2)."""
    if launch.device == "cuda" or launch.backend == "nccl":
        raise UsageError("rpc measures CPU tensors over TensorPipe: use --backend gloo")
    if min(launch.world_sizes) < 2:
        raise UsageError("rpc needs at least 2 ranks: give --world-sizes 2 or more")
    if args.window is not None and "async" not in args.pattern:
        raise UsageError("--window applies to --pattern async: drop --window or add async")
    check_memory(args.sizes, launch)
    return RpcSpec(
        sizes=args.sizes,
        patterns=args.pattern,
        window=args.window or DEFAULT_WINDOW,
        iters=args.iters,
        warmup=args.warmup,
        trials=args.trials,
    )
