"""The options every primitive command shares (sizes, dtypes, op, mode, iterations): CommArgs,
each value parsed by its option, and the CommSpec built from them, the combinations checked: each
bad value is one line (exit 2)."""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, replace
from typing import Annotated, Any

from distbench.comm.api import check_api, parse_apis
from distbench.comm.gpu_modes import BUFFERS_OPTION, CUDA_GRAPH_OPTION, check_gpu_modes
from distbench.comm.memory import check_memory
from distbench.comm.spec import TRIAL_ORDERS, CommSpec
from distbench.options.launch import ResolvedLaunch, same_named
from distbench.options.nccl import (
    DTYPE_OPTION,
    NCCL_CHECK_OPTION,
    TABLE_OPTION,
    resolve_check,
    resolve_dtypes,
)
from distbench.options.opt import MODE_OPTION, choice, flag, integer, text
from distbench.options.shared import sizes_option
from distbench.parse import (
    DTYPE_BYTES,
    OPS,
    UsageError,
    build_size_ladder,
    parse_int,
    parse_size,
)
from distbench.primitives.facts import FACTS
from distbench.stats.stopping import first_stop

AUTO = "auto"
MAX_PRECISION_PERCENT = 50.0
"""--precision above this is not a precision (a CI of +-100 % says nothing)."""
DURATION_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
_DURATION_RE = re.compile(r"^\s*(-?[0-9]*\.?[0-9]+(?:e-?[0-9]+)?)\s*([a-z]*)\s*$")


def parse_iters(text: str) -> int | str:
    """A whole number of ops per trial, or 'auto' (a trial lasts about --trial-time)."""
    value = text.strip().lower()
    if value == AUTO:
        return AUTO
    if not (value.isascii() and value.lstrip("-").isdigit()) or len(value) > 9:
        raise UsageError(
            f"--iters '{text}' is neither a number of ops nor auto: use e.g. --iters 20, or "
            "--iters auto (each size gets as many ops as fill --trial-time)"
        )
    return parse_int(value, "--iters")


def parse_precision(text: str) -> float:
    """'2%' -> 0.02: the half-width of the p50's 95 % CI that ends a measurement."""
    value = text.strip()
    hint = "give a percentage of the p50, e.g. --precision 2%"
    if not value.endswith("%"):
        raise UsageError(f"--precision '{text}' has no %: {hint}")
    try:
        percent = float(value[:-1])
    except ValueError:
        raise UsageError(f"--precision '{text}' is not a percentage: {hint}") from None
    if not 0 < percent <= MAX_PRECISION_PERCENT or not math.isfinite(percent):
        raise UsageError(
            f"--precision {value} is out of range: use more than 0% and at most "
            f"{MAX_PRECISION_PERCENT:g}%, e.g. --precision 2%"
        )
    return percent / 100


def parse_duration(text: str, flag: str, unit: str) -> float:
    """A positive duration in seconds: a number with us, ms or s, or a bare number in `unit`."""
    match = _DURATION_RE.match(text.lower())
    units = ", ".join(DURATION_UNITS)
    example = "50ms" if unit == "ms" else "10s"
    if match is None or match.group(2) not in ("", *DURATION_UNITS):
        raise UsageError(
            f"{flag} '{text}' is not a duration: give a number with {units} (a bare number is "
            f"in {unit}), e.g. {flag} {example}"
        )
    seconds = float(match.group(1)) * DURATION_UNITS[match.group(2) or unit]
    if not 0 < seconds < 86400:
        raise UsageError(
            f"{flag} {text.strip()} must be positive (and under a day), e.g. {example}"
        )
    return seconds


DEFAULT_LADDER = {"gloo": (1 << 10, 64 << 20, 4), "nccl": (1 << 10, 1 << 30, 4)}
"""--min-size, --max-size, --factor when no sizes are given: laptop-sized on gloo."""

INT_DTYPES = ("int8", "uint8", "int32", "int64")


@dataclass(frozen=True)
class CommArgs:
    """Options of every communication-primitive command (and sweep)."""

    sizes: Annotated[
        tuple[int, ...] | None,
        sizes_option("Comma list, binary suffixes K/M/G (1K = 1024 B), e.g. 1K,1M,64M."),
    ] = None
    min_size: Annotated[
        int | None, text("Ladder start [default 1K].", parse_size, "--min-size", "-b")
    ] = None
    max_size: Annotated[
        int | None,
        text("Ladder end [default 64M on gloo, 1G on nccl].", parse_size, "--max-size", "-e"),
    ] = None
    factor: Annotated[
        int | None,
        integer("Ladder step factor [default 4].", minimum=2, decls=("--factor", "-f")),
    ] = None
    dtype: Annotated[tuple[str, ...], DTYPE_OPTION] = ("float32",)
    op: Annotated[
        str | None,
        choice(
            "Reduction: sum, prod, max, min, avg [default sum]; reducing primitives only.",
            OPS,
            "op",
        ),
    ] = None
    mode: Annotated[tuple[str, ...], MODE_OPTION] = ("throughput",)
    iters: Annotated[
        int | str,
        text(
            "Ops per timed trial (latency: samples per trial), or auto: per size, as many as "
            "fill --trial-time (OSU-style).",
            parse_iters,
            "--iters",
            "-n",
        ),
    ] = 20
    warmup: Annotated[
        int, integer("Untimed ops before each measurement.", minimum=0, decls=("--warmup", "-w"))
    ] = 5
    trials: Annotated[
        int,
        integer(
            "Timed trials per measurement (with --precision: the first ones); a row's 95% "
            "interval (ci_low_us, ci_high_us) needs 6 or more."
        ),
    ] = 5
    precision: Annotated[
        float | None,
        text(
            "Add trials until the p50 is known within +-P, e.g. 2%: latency mode, its 95% "
            "confidence sequence over trials (valid at any stop; the row prints it); one sample "
            "a trial, its 99% interval at 3 looks in a row (every 2 trials from the 10th); or "
            "until --max-trials or --budget (column converged says which).",
            parse_precision,
        ),
    ] = None
    max_trials: Annotated[
        int | None, integer("With --precision: most trials per measurement [50].")
    ] = None
    budget: Annotated[
        float | None,
        text(
            "With --precision: no trial is added after this long per measurement, e.g. 10s "
            "[10s; a bare number is seconds].",
            lambda value: parse_duration(value, "--budget", "s"),
        ),
    ] = None
    trial_time: Annotated[
        float | None,
        text(
            "With --iters auto: what one trial should last, e.g. 50ms [50ms; a bare number is ms].",
            lambda value: parse_duration(value, "--trial-time", "ms"),
        ),
    ] = None
    order: Annotated[
        str,
        choice(
            "sequential: each measurement's trials back to back; grouped: trial t of each of 3 "
            "consecutive measurements in round t, group after group (a crash loses at most the "
            "group); interleaved: the same over the whole launch (rows land after the last round; "
            "a load burst hits every row alike); auto: grouped where latency rows are measured "
            "(--mode latency or both, its throughput rows too: on a drifting machine a latency "
            "row's 95 % interval holds only with its trials apart; with --precision, 3 "
            "measurements in flight, each leaving as it stops), else sequential, and sequential "
            "with --cuda-graph or symmetric buffers.",
            (AUTO, *TRIAL_ORDERS),
            "order",
        ),
    ] = AUTO
    check: Annotated[bool, flag("Verify results bit-exactly after timing.", "--check")] = False
    nccl_check: Annotated[int | None, NCCL_CHECK_OPTION] = None
    api: Annotated[
        tuple[str, ...],
        text(
            "Issue the collective through c10d, functional (torch's functional collectives + "
            "wait_tensor) or compiled (torch.compile of them; inductor where a C++ compiler "
            "exists, else aot_eager; or compiled:inductor, compiled:aot_eager); a comma list "
            "measures each, e.g. c10d,functional.",
            parse_apis,
        ),
    ] = ("c10d",)
    cuda_graph: Annotated[int | None, CUDA_GRAPH_OPTION] = None
    buffers: Annotated[str, BUFFERS_OPTION] = "regular"
    nccl_trace: Annotated[
        bool,
        flag(
            "Run the workers with NCCL_DEBUG=INFO (TUNING) and record the algorithm, protocol "
            "and channels NCCL chose per row; timed with logging on; empty on gloo.",
            "--nccl-trace",
        ),
    ] = False
    table: Annotated[str, TABLE_OPTION] = "default"


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


SEQUENTIAL_LATENCY = (
    "note: --order sequential: each latency row's trials run back to back, so a machine's drift "
    "during one measurement reaches its interval; measured beside a load burst on a 2-core box, "
    "its 95 % intervals held 86-92 % and --precision stopped off by more than its target on 5.8 % "
    "of rows (the default, grouped: 93-96 % and 3.9 %; docs/measurement.md"
    "#coverage-of-the-printed-intervals)"
)
"""Said where a user asks latency rows sequentially: what the order costs their intervals."""


def build_comm_spec(
    primitives: tuple[str, ...],
    args: CommArgs,
    launch: ResolvedLaunch,
    root: str = "0",
    options: dict[str, Any] | None = None,
) -> CommSpec:
    """The workload of a primitive command, the sizes resolved and the dtypes checked."""
    for api in args.api:
        check_api(api, primitives)
    op = args.op or "sum"
    dtypes = resolve_dtypes(args.dtype, primitives, op, args.buffers)  # --dtype all
    args = replace(args, dtype=dtypes, check=resolve_check(args.check, args.nccl_check))
    where = (launch.backend, launch.device, launch.world_sizes, launch.separate_launches)
    check_gpu_modes(primitives, args, *where)
    sizes = resolve_sizes(args, launch.backend)
    check_dtypes(args.dtype, op, sizes)
    check_memory(sizes, launch)
    if args.order == "sequential" and "latency" in args.mode:
        print(SEQUENTIAL_LATENCY, file=sys.stderr)
    return CommSpec(
        primitives=primitives,
        sizes=tuple(sizes),
        dtypes=args.dtype,
        op=op,
        modes=args.mode,
        **same_named(args, "warmup", "trials", "check", "api"),
        nccl_trace=args.nccl_trace or args.buffers == "symmetric",  # rows say what NCCL ran
        cuda_graph=args.cuda_graph or 0,
        buffers=args.buffers,
        root=root,
        options=dict(options or {}),
        **trial_settings(args),
    )


def trial_settings(args: CommArgs) -> dict[str, Any]:
    """CommSpec's iteration and trial fields; an option that needs another one is refused."""
    if args.precision is None:
        for flag, value in (("--max-trials", args.max_trials), ("--budget", args.budget)):
            if value is not None:
                raise UsageError(f"{flag} applies with --precision: add e.g. --precision 2%")
    # latency trials of several ops converge on their sequence from 7 trials; one sample from 14
    earliest = first_stop(args.mode == ("latency",) and args.iters != 1)
    if args.precision is not None and args.max_trials is not None and args.max_trials < earliest:
        raise UsageError(
            f"--max-trials {args.max_trials} ends every measurement before --precision can be "
            f"met: a row can converge after {earliest} trials at the earliest; give --max-trials "
            f"{earliest} or more, or leave it out (50)"
        )
    if args.precision is not None and args.order == "interleaved":
        raise UsageError(
            "--precision adds trials until each measurement stops, which --order interleaved "
            "(every measurement of the launch in each round) does not: use --order grouped or "
            "sequential with --precision, or fixed --trials"
        )
    auto = args.iters == AUTO
    if args.trial_time is not None and not auto:
        raise UsageError("--trial-time applies to --iters auto: add --iters auto")
    defaults = CommSpec(primitives=("all_reduce",), sizes=(1,))
    return {
        "iters": defaults.iters if auto else int(args.iters),
        "iters_auto": auto,
        "trial_time_ms": defaults.trial_time_ms
        if args.trial_time is None
        else args.trial_time * 1e3,
        "precision": args.precision or 0.0,
        "max_trials": args.max_trials or defaults.max_trials,
        "budget_s": defaults.budget_s if args.budget is None else args.budget,
        "trial_order": resolve_order(args),
    }


def resolve_order(args: CommArgs) -> str:
    """--order auto (the default): grouped where latency rows are measured (--mode latency, or
    both: one order a launch, so its throughput rows too), since a latency row's interval needs
    its trials apart (comm/interleave.py; with --precision, comm/window.py); sequential where one
    case is measured at a time (--cuda-graph, symmetric buffers), and in throughput mode alone
    (its order-statistic interval held under drift: docs/measurement.md)."""
    if args.order != AUTO:
        return args.order
    one_at_a_time = args.cuda_graph or args.buffers == "symmetric"
    return "grouped" if "latency" in args.mode and not one_at_a_time else "sequential"
