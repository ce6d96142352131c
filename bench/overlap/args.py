"""`distbench overlap`'s own options (OverlapArgs), each parsed by its option, and the
OverlapSpec built from them. Torch-free (the CLI process)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Annotated

from distbench.comm.memory import check_memory
from distbench.options.launch import ResolvedLaunch, same_named
from distbench.options.opt import ITERS_OPTION, MODE_OPTION, flag, integer, text
from distbench.overlap.spec import MAX_COMPUTE, OVERLAP_PRIMITIVES, OverlapSpec
from distbench.parse import UsageError, parse_int, parse_list, parse_sizes
from distbench.primitives.facts import COMMANDS, emulation_notes

DEFAULT_SIZES = {"gloo": (1 << 20,), "nccl": (64 << 20,)}
"""One size unless --sizes says otherwise."""
NAMES = {c: p for c, p in COMMANDS.items() if p in OVERLAP_PRIMITIVES}
"""Command names (allreduce ...) of the collectives overlap issues -> torch's names."""


def parse_overlap_primitives(value: str) -> tuple[str, ...]:
    """'allreduce,allgather' (command names or torch's), each once, in the order given."""
    found = []
    for item in parse_list(value, "collectives", example="allreduce,allgather"):
        key = item.lower().replace("-", "")
        name = NAMES.get(key) or (key if key in OVERLAP_PRIMITIVES else None)
        if name is None:
            raise UsageError(
                f"--primitives '{item}' is not a collective overlap issues: choose from "
                f"{', '.join(NAMES)}"
            )
        found.append(name)
    return tuple(dict.fromkeys(found))


def parse_compute(value: str) -> tuple[int, ...]:
    """'1024' or '512,2048': N of the N x N matmuls, each 1..MAX_COMPUTE."""
    sizes = [parse_int(item, "--compute") for item in parse_list(value, "matmul sizes", "1024")]
    if max(sizes) > MAX_COMPUTE:
        raise UsageError(f"--compute takes N up to {MAX_COMPUTE} (an N x N matmul), got {value}")
    return tuple(dict.fromkeys(sizes))


def parse_threads(value: str) -> tuple[int, ...]:
    """'1,2' (torch.set_num_threads per case) or '0' (as launched)."""
    items = parse_list(value, "thread counts", example="1,2")
    return tuple(dict.fromkeys(parse_int(item, "--compute-threads", 0) for item in items))


@dataclass(frozen=True)
class OverlapArgs:
    """Options of `distbench overlap` (None: the default for the backend)."""

    primitives: Annotated[
        tuple[str, ...],
        text(
            "Comma list of collectives issued async_op=True during the compute: allreduce, "
            "allgather, reducescatter, broadcast.",
            parse_overlap_primitives,
            "--primitives",
            "--primitive",
            default_text="allreduce",
        ),
    ] = ("all_reduce",)
    sizes: Annotated[
        tuple[int, ...] | None,
        text(
            "Comma list of collective sizes, binary suffixes K/M/G [default 1M on gloo, 64M on "
            "nccl].",
            lambda value: tuple(parse_sizes(value)),
            "--sizes",
            "-s",
        ),
    ] = None
    compute: Annotated[
        tuple[int, ...],
        text("Comma list of N: the compute is fp32 N x N matmuls.", parse_compute),
    ] = (1024,)
    compute_iters: Annotated[
        int,
        integer("Matmuls per compute op; 0: as many as take about the collective's time alone.", 0),
    ] = 0
    compute_threads: Annotated[
        tuple[int, ...],
        text(
            "Comma list of torch.set_num_threads values, one case each (0: as launched, "
            "OMP_NUM_THREADS).",
            parse_threads,
        ),
    ] = (0,)
    mode: Annotated[tuple[str, ...], MODE_OPTION] = ("throughput",)
    iters: Annotated[int, ITERS_OPTION] = 10
    warmup: Annotated[int, integer("Untimed ops of each phase before the trials.", 0)] = 3
    trials: Annotated[int, integer("Timed trials of each phase per case.")] = 5
    check: Annotated[
        bool,
        flag(
            "Check the collective's result bit-exactly, issued with the compute running.",
            "--check",
        ),
    ] = False


TAKEN_AS_GIVEN = (
    "primitives", "compute", "compute_iters", "compute_threads",
    "iters", "warmup", "trials", "check",
)  # fmt: skip
"""OverlapSpec's fields that take their option's value as it is."""


def build_overlap_spec(args: OverlapArgs, launch: ResolvedLaunch) -> OverlapSpec:
    """The spec of one launch, every combination of options checked (one line, exit 2)."""
    if max(launch.world_sizes) < 2 and launch.device != "cuda":
        # On CUDA one rank still runs NCCL's kernel on its own stream beside the matmul.
        raise UsageError("overlap on CPU needs at least 2 ranks: give --world-sizes 2 or more")
    if len(launch.world_sizes) > 1:
        raise UsageError(
            f"overlap measures one world: give one --world-sizes value, not {launch.world_sizes}"
        )
    if launch.device == "cuda" and any(args.compute_threads):
        raise UsageError("--compute-threads sets the CPU's matmul threads: leave it out on CUDA")
    for line in emulation_notes(args.primitives, launch.backend):
        print(line, file=sys.stderr)
    sizes = args.sizes or DEFAULT_SIZES.get(launch.backend, DEFAULT_SIZES["gloo"])
    check_memory(sizes, launch)
    return OverlapSpec(
        sizes=sizes,
        modes=args.mode,
        **same_named(args, *TAKEN_AS_GIVEN),
    )
