"""The options of in-place timing (--placement) and of alltoallv's splits (--skew, --seed,
--tokens, --hidden, --experts, --topk): each value parsed by its option, then checked against
the primitives, backend and world sizes of the run; each bad value is one UsageError line."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from distbench.options.shared import parse_choice_list
from distbench.parse import DTYPE_BYTES, UsageError
from distbench.primitives.facts import PLACEABLE, PLACEMENTS, SKEWS

MOE_FLAGS = ("tokens", "hidden", "experts", "topk")
UNEVEN_FLAGS = ("skew", "seed", *MOE_FLAGS)
"""PrimitiveArgs fields that apply to alltoallv only."""
MAX_ZIPF = 10.0


def parse_placement(text: str) -> list[str]:
    """'out', 'in', 'in,out' (or 'both') -> the placements, in nccl-tests' order (out, in)."""
    hint = "a comma list, e.g. in,out"
    choices = sorted(PLACEMENTS)  # named in, out
    given = parse_choice_list(text, "--placement", choices, "both", "placement", "in,out", hint)
    return [p for p in PLACEMENTS if p in given]


def parse_skew(text: str) -> str:
    """'uniform', 'zipf:S' (S > 0) or 'hot:FRACTION' (0 < FRACTION <= 1), kept as text."""
    value = text.strip().lower()
    kind, colon, number = value.partition(":")
    hint = "use uniform, zipf:S (e.g. zipf:1.2) or hot:FRACTION (e.g. hot:0.5)"
    if kind not in SKEWS or (kind == "uniform") == bool(colon):
        raise UsageError(f"--skew '{text}' is not a skew: {hint}")
    if kind == "uniform":
        return kind
    try:
        parameter = float(number)
    except ValueError:
        raise UsageError(f"--skew '{text}': '{number}' is not a number; {hint}") from None
    if kind == "zipf" and not 0 < parameter <= MAX_ZIPF:
        raise UsageError(f"--skew {value}: the zipf exponent must be above 0 and at most 10")
    if kind == "hot" and not 0 < parameter <= 1:
        raise UsageError(f"--skew {value}: the hot fraction must be above 0 and at most 1")
    if not math.isfinite(parameter):
        raise UsageError(f"--skew '{text}' is not finite: {hint}")
    return f"{kind}:{parameter:g}"


def build_uneven_options(
    primitives: Sequence[str], args: Any, world_sizes: Sequence[int]
) -> dict[str, Any]:
    """CommSpec options of --placement and alltoallv's splits (`args`: PrimitiveArgs)."""
    options: dict[str, Any] = {}
    if args.placement is not None:
        if not set(PLACEABLE) & set(primitives):
            raise UsageError("--placement applies to allgather, reducescatter and alltoall only")
        options["placements"] = args.placement
    given = [f"--{name}" for name in UNEVEN_FLAGS if getattr(args, name) is not None]
    if "all_to_allv" not in primitives:
        if given:
            raise UsageError(f"{given[0]} applies to alltoallv only")
        return options
    options.update(skew=args.skew or "uniform", seed=args.seed or 0, moe=None)
    moe = {name: getattr(args, name) for name in MOE_FLAGS}
    if any(value is not None for value in moe.values()):
        missing = [f"--{name}" for name, value in moe.items() if value is None]
        if missing:
            raise UsageError(
                "--tokens, --hidden, --experts and --topk go together (an MoE layer's routing): "
                f"add {', '.join(missing)}, e.g. --tokens 512 --hidden 1024 --experts 8 --topk 2"
            )
        if moe["topk"] > moe["experts"]:
            raise UsageError(
                f"--topk {moe['topk']} chooses more experts than --experts {moe['experts']}: "
                "use --topk at most --experts"
            )
        for n in world_sizes:
            if moe["experts"] % n:
                raise UsageError(
                    f"--experts {moe['experts']} cannot be spread evenly over world size {n}: "
                    "use a multiple of every world size, e.g. --experts 8 with 1,2,4,8 ranks"
                )
        options["moe"] = moe
    return options


def fit_comm(primitives: Sequence[str], options: dict[str, Any], comm: Any, backend: str) -> Any:
    """`comm` (CommArgs) with the MoE form's size: tokens x topk x hidden elements of the first
    dtype, which each rank sends (refused with --sizes, or beside other primitives); in-place
    alltoall refused."""
    refuse_in_place(primitives, options, backend)
    moe = options.get("moe")
    if not moe:
        return comm
    if comm.sizes or comm.min_size or comm.max_size or comm.factor:
        raise UsageError("--tokens fixes the size (tokens x topk x hidden elements): drop --sizes")
    if tuple(primitives) != ("all_to_allv",):
        raise UsageError("--tokens fixes the size: run it with distbench alltoallv alone")
    size = moe["tokens"] * moe["topk"] * moe["hidden"] * DTYPE_BYTES[comm.dtype[0]]
    return dataclasses.replace(comm, sizes=(size,))


def refuse_in_place(primitives: Sequence[str], options: dict[str, Any], backend: str) -> None:
    """In-place all_to_all is refused, in one line. gloo's all_to_all_single with one buffer for
    input and output delivers wrong data in about half its calls (it sends from the buffer it is
    receiving into, a race); NCCL's is a group of send/recv pairs with no order between the send
    reading a chunk and the receive writing it, so --check may fail now and then at large sizes
    (issue #30)."""
    if "all_to_all" not in primitives or "in" not in options.get("placements", []):
        return
    if backend == "gloo":
        raise UsageError(
            "--placement in for alltoall: gloo's all_to_all_single overwrites its input while "
            "sending it when both are one buffer (--check finds wrong data); use --placement "
            "out on gloo"
        )
    raise UsageError(
        f"--placement in for alltoall: {backend}'s all_to_all_single is a group of send/recv "
        "pairs that gives no order between sending a chunk and receiving into it, so the "
        "result can be wrong; use --placement out for alltoall"
    )
