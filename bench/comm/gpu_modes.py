"""--cuda-graph N and --buffers regular|symmetric: the two GPU-only ways of issuing a collective,
checked in the CLI process (torch-free, as comm/api.py); comm/graph.py and comm/symmetric.py run
them on the ranks. docs/apis.md says what each measures.

- --cuda-graph N, as nccl-tests' -G: each measurement captures --iters ops into one CUDA graph and
  times N replays of it between two CUDA events (timer cuda_event+graph, column graph = true).
  The primitives are those whose facts say `graph` (those with a tensor-in, tensor-out form, the
  form --check replays a captured op of). Throughput mode only: one sample is N replays.
- --buffers symmetric: the timed buffers live in symmetric memory (torch's
  `_symmetric_memory`, NCCL backend: allocated by `empty`, window-registered by `rendezvous` on
  the group), which NCCL 2.27+ serves with its symmetric kernels. NCCL has such kernels for
  all_gather (any dtype) and for all_reduce and reduce_scatter with sum or avg of float32,
  float16 or bfloat16 (each primitive's facts say it: `symmetric`); every other combination runs
  NCCL's regular kernels on those buffers, so it is refused rather than labelled symmetric. Where
  NCCL still runs its regular kernels on symmetric buffers (its symmetric kernels need every GPU
  one NVLink hop from the others, and their size ranges and ops change with its version: avg is
  served from 2.29 on, in part), --nccl-trace records it: --buffers symmetric turns it on, and
  each row's nccl_symmetric says what NCCL ran (comm/nccl_trace.py).
- --buffers symmetric needs 2 ranks or more (a 1-rank communicator moves nothing, and torch's
  symmetric memory on it is untested upstream) and one world size per launch: on subgroups of one
  launch, each rank's symmetric pool keeps the segments of the world sizes it took part in, so
  ranks register windows of different sizes (--separate-launches gives each world size its own).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from distbench.options.opt import choice, integer
from distbench.parse import UsageError
from distbench.primitives.facts import FACTS, Symmetric, with_flag

BUFFERS = ("regular", "symmetric")
"""--buffers values; the rows' buffers column."""
GRAPH_PRIMITIVES = with_flag("graph")
"""The collectives --cuda-graph captures."""
SYMMETRIC_PRIMITIVES = with_flag("symmetric")
"""The collectives NCCL has symmetric kernels for."""

CUDA_GRAPH_OPTION = integer(
    "CUDA + nccl: capture --iters ops in a CUDA graph and time N replays of it (nccl-tests -G); "
    "rows say graph = true; 0: off.",
    minimum=0,
    decls=("--cuda-graph", "-G"),
)
BUFFERS_OPTION = choice(
    "regular, or symmetric (CUDA + nccl: symmetric memory, NCCL's symmetric kernels; "
    f"{', '.join(FACTS[name].command for name in SYMMETRIC_PRIMITIVES)}).",
    BUFFERS,
    "buffers",
)


def commands(names: Sequence[str]) -> str:
    return ", ".join(FACTS[name].command for name in names)


def refuse_outside(primitives: Sequence[str], allowed: Sequence[str], message: str) -> None:
    """One line, `message` with {other} the commands of the primitives not in `allowed`."""
    other = [name for name in primitives if name not in allowed]
    if other:
        raise UsageError(message.format(other=commands(other)))


def check_gpu_modes(
    primitives: Sequence[str],
    args: Any,
    backend: str,
    device: str,
    world_sizes: Sequence[int] = (),
    separate_launches: bool = False,
) -> None:
    """Refuse, in one line, --cuda-graph or --buffers symmetric where they cannot run (`args`:
    CommArgs; backend, device, world sizes and --separate-launches: the resolved launch's; no
    world sizes: not checked)."""
    asked = (("--cuda-graph", args.cuda_graph), ("--buffers symmetric", symmetric(args)))
    given = [flag for flag, on in asked if on]
    for flag in given:
        if backend != "nccl" or device != "cuda":
            raise UsageError(
                f"{flag} needs CUDA and the nccl backend (this run: {backend} on {device}): "
                f"run it with --backend nccl on a GPU node, or drop {flag}"
            )
        if args.api != ("c10d",):
            apis = ",".join(args.api)
            raise UsageError(f"{flag} issues the c10d calls: drop --api {apis} or {flag}")
        if args.order in ("grouped", "interleaved"):
            raise UsageError(f"{flag} measures one case at a time: use --order sequential")
    if args.cuda_graph:
        check_graph(primitives, args)
    if symmetric(args):
        check_symmetric(primitives, args)
        check_symmetric_world_sizes(world_sizes, separate_launches)


def check_symmetric_world_sizes(world_sizes: Sequence[int], separate_launches: bool) -> None:
    """--buffers symmetric at 2 ranks or more, one world size per launch (module docstring)."""
    if 1 in world_sizes:
        rest = ",".join(str(n) for n in world_sizes if n != 1) or "2"
        raise UsageError(
            "--buffers symmetric needs 2 ranks or more: at world size 1 nothing moves and a "
            f"1-rank NCCL communicator's symmetric memory is untested: use --world-sizes {rest}"
        )
    if len(set(world_sizes)) > 1 and not separate_launches:
        raise UsageError(
            "--buffers symmetric with several world sizes needs --separate-launches (or one "
            "world size per run): on subgroups of one launch the ranks' symmetric pools hold "
            "segments of different sizes, so NCCL would register windows that differ by rank"
        )


def symmetric(args: Any) -> bool:
    return bool(args.buffers == "symmetric")


def check_graph(primitives: Sequence[str], args: Any) -> None:
    refuse_outside(
        primitives,
        GRAPH_PRIMITIVES,
        f"--cuda-graph captures {commands(GRAPH_PRIMITIVES)} (the collectives whose --check "
        "replays a captured op), not {other}: drop --cuda-graph for those",
    )
    if "latency" in args.mode:
        raise UsageError(
            "--cuda-graph times N replays of --iters captured ops back to back (throughput "
            "mode): drop --mode latency"
        )
    if args.iters == "auto":
        raise UsageError("--cuda-graph captures --iters ops: give a number, e.g. --iters 20")


def check_symmetric(primitives: Sequence[str], args: Any) -> None:
    refuse_outside(
        primitives,
        SYMMETRIC_PRIMITIVES,
        f"--buffers symmetric: NCCL has symmetric kernels for {commands(SYMMETRIC_PRIMITIVES)} "
        "only; {other} would run its regular kernels on them: use --buffers regular for those",
    )
    limited = [name for name in SYMMETRIC_PRIMITIVES if FACTS[name].symmetric != Symmetric()]
    if not set(limited) & set(primitives):
        return
    served = FACTS[limited[0]].symmetric or Symmetric()  # the reducing ones' (facts.py)
    names = " and ".join(FACTS[name].command for name in limited)
    op = args.op or "sum"
    if op not in served.ops:
        raise UsageError(
            f"--buffers symmetric: NCCL's symmetric {names} reduce with "
            f"{' or '.join(served.ops)} only; --op {op} would run the regular kernels"
        )
    dtypes = [dtype for dtype in args.dtype if dtype not in served.dtypes]
    if dtypes:
        raise UsageError(
            f"--buffers symmetric: NCCL's symmetric {names} take "
            f"{', '.join(served.dtypes)}; {', '.join(dtypes)} would run the regular kernels"
        )
