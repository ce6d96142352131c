"""`distbench pairs`' own options (PairsArgs), each parsed by its option, and the PairsSpec built
from them for one resolved launch. Torch-free (the CLI process)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated

from distbench.comm.memory import check_memory
from distbench.comm.primitive_args import MAX_WINDOW, parse_window
from distbench.options.launch import ResolvedLaunch, same_named
from distbench.options.opt import ITERS_OPTION, MODE_OPTION, choice, flag, integer, text
from distbench.options.shared import sizes_option
from distbench.pairs.spec import DEFAULT_THRESHOLD, LEVELS, PairsSpec
from distbench.parse import UsageError, parse_dtype

DEFAULT_SIZE = {"gloo": 4 << 20, "nccl": 64 << 20}
"""One large size per pair unless --sizes says otherwise."""
PRIMITIVE_NAMES = {"sendrecv": "send_recv", "allreduce": "all_reduce"}


def parse_pair_primitive(value: str) -> str:
    """'sendrecv' or 'allreduce' (torch's names too) -> torch's name."""
    key = value.strip().lower().replace("_", "").replace("-", "")
    if key not in PRIMITIVE_NAMES:
        raise UsageError(
            f"--primitive '{value}' is not one pairs can run: choose sendrecv (a bidirectional "
            "window per pair) or allreduce (on the pair's subgroup)"
        )
    return PRIMITIVE_NAMES[key]


def parse_threshold(value: str) -> float:
    """A positive robust z-score, e.g. 3.5."""
    try:
        threshold = float(value)
    except ValueError:
        threshold = math.nan
    if not math.isfinite(threshold) or threshold <= 0:
        raise UsageError(
            f"--outlier-threshold '{value}' is not a positive number: give a robust z-score, "
            f"e.g. --outlier-threshold {DEFAULT_THRESHOLD}"
        )
    return threshold


@dataclass(frozen=True)
class PairsArgs:
    """Options of `distbench pairs` (None: the default for the backend)."""

    primitive: Annotated[
        str,
        text(
            "What each pair runs: sendrecv (a bidirectional window) or allreduce (on the "
            "pair's subgroup).",
            parse_pair_primitive,
            default_text="sendrecv",
        ),
    ] = "send_recv"
    level: Annotated[
        str, choice("rank: every pair of ranks; node: every pair of nodes.", LEVELS, "level")
    ] = "rank"
    sizes: Annotated[
        tuple[int, ...] | None,
        sizes_option(
            "Comma list, binary suffixes K/M/G [default one size: 4M on gloo, 64M on nccl]."
        ),
    ] = None
    dtype: Annotated[str, text("The element type, e.g. float32 or bfloat16.", parse_dtype)] = (
        "float32"
    )
    mode: Annotated[tuple[str, ...], MODE_OPTION] = ("throughput",)
    iters: Annotated[int, ITERS_OPTION] = 10
    warmup: Annotated[int, integer("Untimed ops before each round's trials.", minimum=0)] = 3
    trials: Annotated[int, integer("Timed trials per pair.")] = 5
    window: Annotated[
        int | None,
        integer(
            "sendrecv: messages in flight each way [64; above 1M, 64M / size].",
            maximum=MAX_WINDOW,
            parse=parse_window,
        ),
    ] = None
    outlier_threshold: Annotated[
        float,
        text(
            "Robust z-score (median/MAD over the other ranks) of a rank's (node's) best pair at "
            "or below which it is an outlier; the scale is at least 10%.",
            parse_threshold,
        ),
    ] = DEFAULT_THRESHOLD
    fail_on_outlier: Annotated[
        bool, flag("Exit 1 when any rank or node is an outlier.", "--fail-on-outlier")
    ] = False


def build_pairs_spec(args: PairsArgs, launch: ResolvedLaunch) -> PairsSpec:
    """The spec of one launch, every combination of options checked (one line, exit 2)."""
    if args.level == "node" and launch.nnodes < 2:
        raise UsageError(
            "--level node needs two or more nodes (--nnodes): on one node use --level rank"
        )
    if args.window is not None and args.primitive != "send_recv":
        raise UsageError("--window applies to --primitive sendrecv: drop --window")
    if args.level == "rank" and max(launch.world_sizes) < 2:
        raise UsageError("pairs needs at least 2 ranks: give --world-sizes 2 or more")
    if len(launch.world_sizes) > 1:
        raise UsageError(
            f"pairs measures one world: give one --world-sizes value, not {launch.world_sizes}"
        )
    sizes = args.sizes or (DEFAULT_SIZE[launch.backend],)
    check_memory(sizes, launch)
    return PairsSpec(
        sizes=tuple(sizes),
        **same_named(args, "primitive", "level", "dtype", "iters", "warmup", "trials"),
        modes=args.mode,
        window=args.window or 0,
        threshold=args.outlier_threshold,
        nodes=launch.nnodes if args.level == "node" else 0,
    )
