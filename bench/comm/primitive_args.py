"""comm's options that only some primitives take (--root, --pairs, --pattern, --window,
--bidirectional): PrimitiveArgs, each value parsed by its option, then checked against the
primitives and world sizes of the run, and which of them --help shows for a primitive. Each bad
value is one UsageError line (exit 2) before anything is launched."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from distbench.comm import uneven
from distbench.comm.args import CommArgs, build_comm_spec
from distbench.comm.spec import CommSpec
from distbench.options.launch import ResolvedLaunch
from distbench.options.opt import flag, integer, text
from distbench.options.shared import parse_choice_list
from distbench.parse import (
    DTYPE_BYTES,
    UsageError,
    format_size,
    parse_int,
    parse_list,
)
from distbench.primitives.facts import (
    COMMANDS,
    DEFAULT_PATTERNS,
    FACTS,
    PATTERNS,
    ROOTED,
    emulation_notes,
)

MAX_WINDOW = 1024


def parse_root(text: str) -> str:
    """'all' (rotate over every rank) or a rank number, kept as the string the spec stores."""
    value = text.strip().lower()
    if value == "all":
        return value
    if not (value.isascii() and value.isdigit()) or len(value) > 9:  # found by fuzzing: '²'
        raise UsageError(f"--root '{text}' is not a rank: use a rank number, e.g. --root 1, or all")
    return str(int(value))


def parse_pairs(text: str) -> str | list[list[int]]:
    """'all' (every ordered pair) or 'SRC:DST[,SRC:DST...]' -> [[src, dst], ...]."""
    value = text.strip().lower()
    if value == "all":
        return value
    pairs: list[list[int]] = []
    for item in parse_list(value, "pairs", example="0:1,0:2"):
        match = re.fullmatch(r"([0-9]{1,9})\s*:\s*([0-9]{1,9})", item)  # ASCII, int()-safe
        if match is None:
            raise UsageError(
                f"--pairs '{text}': '{item}' is not SRC:DST; use e.g. --pairs 0:1, "
                "--pairs 0:1,0:2 or --pairs all"
            )
        src, dst = int(match.group(1)), int(match.group(2))
        if src == dst:
            raise UsageError(f"--pairs '{item}' sends a rank to itself: give two different ranks")
        if [src, dst] not in pairs:
            pairs.append([src, dst])
    return pairs


def parse_patterns(text: str) -> list[str]:
    """'pingpong', 'window', 'ring', 'multipair', a comma list of them, or 'all'."""
    return parse_choice_list(
        text, "--pattern", PATTERNS, "all", "patterns", "pingpong,ring", "or all"
    )


def parse_window(text: str) -> int:
    """Messages in flight per window, 1..MAX_WINDOW."""
    window = parse_int(text, "--window")
    if window > MAX_WINDOW:
        raise UsageError(f"--window {window} is too large: use at most {MAX_WINDOW} (OSU uses 64)")
    return window


def parse_primitives(text: str) -> tuple[str, ...]:
    """'allreduce,sendrecv' (command names) or torch names ('all_reduce'), or 'all'."""
    if text.strip().lower() == "all":
        return tuple(FACTS)
    names = []
    for item in parse_list(text, "primitives", example="allreduce,broadcast"):
        value = item.lower().replace("-", "")
        name = COMMANDS.get(value) or (value if value in FACTS else None)
        if value == "ddp":
            raise UsageError(
                "ddp is a training workload, not a primitive: run it with distbench ddp, "
                "e.g. distbench ddp --world-sizes 1,2"
            )
        if name is None:
            raise UsageError(
                f"unknown primitive '{item}': choose from {', '.join(COMMANDS)} (or all)"
            )
        names.append(name)
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class PrimitiveArgs:
    """The primitive-specific options (None: not given). Every primitive command takes them all,
    so one that does not apply is refused with one line; --help shows only those that apply."""

    root: Annotated[
        str | None,
        text(
            "broadcast/reduce/gather root rank, or 'all' to measure every root in turn [0].",
            parse_root,
        ),
    ] = None
    pairs: Annotated[
        str | list[list[int]] | None,
        text("sendrecv pairs SRC:DST (comma list), or 'all' ordered pairs [0:1].", parse_pairs),
    ] = None
    pattern: Annotated[
        list[str] | None,
        text(
            "sendrecv: pingpong, window, ring, multipair (pairs i, i + n/2 at once; even n) "
            "(comma list, or all) [pingpong,window].",
            parse_patterns,
        ),
    ] = None
    window: Annotated[
        int | None,
        integer(
            "sendrecv window, multipair: messages in flight per window [64; above 1M, 64M / size].",
            maximum=MAX_WINDOW,
            parse=parse_window,
        ),
    ] = None
    bidirectional: Annotated[
        bool,
        flag(
            "sendrecv window, multipair: both ranks of a pair send at once (osu_bibw).",
            "--bidirectional",
        ),
    ] = False
    placement: Annotated[
        list[str] | None,
        text("allgather/reducescatter/alltoall: out, in, in,out [out].", uneven.parse_placement),
    ] = None
    skew: Annotated[
        str | None,
        text(
            "alltoallv splits: uniform, zipf:S or hot:FRACTION, seeded [uniform].",
            uneven.parse_skew,
        ),
    ] = None
    seed: Annotated[int | None, integer("alltoallv: seed of the splits [0].", minimum=0)] = None
    tokens: Annotated[int | None, integer("alltoallv MoE form: tokens each rank routes.")] = None
    hidden: Annotated[int | None, integer("alltoallv MoE form: elements per token.")] = None
    experts: Annotated[int | None, integer("alltoallv MoE form: experts (E/n per rank).")] = None
    topk: Annotated[int | None, integer("alltoallv MoE form: experts per token.")] = None


def hidden_options(primitive: str) -> list[str]:
    """The PrimitiveArgs that `distbench <command> --help` leaves out for a primitive (torch
    name, or `sweep`, which shows them all): those that do not apply to it."""
    if primitive == "sweep":
        return []
    hidden = []
    if primitive not in ROOTED:
        hidden.append("root")
    if primitive != "send_recv":
        hidden += ["pairs", "pattern", "window", "bidirectional"]
    hidden += [] if primitive in uneven.PLACEABLE else ["placement"]
    return hidden + ([] if primitive == "all_to_allv" else list(uneven.UNEVEN_FLAGS))


def build_primitive_options(
    primitives: Sequence[str], args: PrimitiveArgs, world_sizes: Sequence[int]
) -> tuple[str, dict[str, Any]]:
    """(root, options) for CommSpec, every value checked against every world size of the run."""
    smallest = min(world_sizes)
    root = "0"
    if args.root is not None:
        if not any(name in ROOTED for name in primitives):
            rooted = ", ".join(FACTS[name].command for name in ROOTED)
            raise UsageError(f"--root applies to {rooted} only (and sweep measuring one of them)")
        root = args.root
        if root != "all" and int(root) >= smallest:
            raise UsageError(
                f"--root {root} is not a rank at world size {smallest}: use a rank below "
                f"{smallest}, or --root all"
            )
    if "send_recv" not in primitives:
        given = [
            flag
            for flag, value in (
                ("--pairs", args.pairs),
                ("--pattern", args.pattern),
                ("--window", args.window),
                ("--bidirectional", args.bidirectional or None),
            )
            if value is not None
        ]
        if given:
            raise UsageError(f"{given[0]} applies to sendrecv only")
        return root, uneven.build_uneven_options(primitives, args, world_sizes)
    extra = uneven.build_uneven_options(primitives, args, world_sizes)
    return root, {**build_sendrecv_options(args, world_sizes), **extra}


def build_sendrecv_options(args: PrimitiveArgs, world_sizes: Sequence[int]) -> dict[str, Any]:
    smallest = min(world_sizes)
    if smallest < 2:
        raise UsageError("sendrecv needs two ranks or more: use --world-sizes 2 or larger")
    patterns = args.pattern or list(DEFAULT_PATTERNS)
    pairs = args.pairs or [[0, 1]]
    if args.pairs is not None and not {"pingpong", "window"} & set(patterns):
        raise UsageError(
            "--pairs applies to --pattern pingpong and window (ring and multipair use every rank)"
        )
    odd = sorted(n for n in world_sizes if n % 2)
    if "multipair" in patterns and odd:
        if patterns == ["multipair"]:
            raise UsageError(
                f"--pattern multipair pairs rank i with i + n/2, which world size {odd[0]} (odd) "
                "cannot: use even --world-sizes, e.g. 2,4"
            )
        print(f"note: multipair needs an even world size: skipped at {odd}", file=sys.stderr)
    for src, dst in pairs if isinstance(pairs, list) else []:
        if max(src, dst) >= smallest:
            raise UsageError(
                f"--pairs {src}:{dst} names rank {max(src, dst)}, which world size {smallest} "
                f"lacks: use ranks below {smallest}, or --pairs all"
            )
    if (args.window is not None or args.bidirectional) and not {"window", "multipair"} & set(
        patterns
    ):
        given = "--window" if args.window is not None else "--bidirectional"
        raise UsageError(
            f"{given} applies to --pattern window and multipair: add window to --pattern"
        )
    return {
        "patterns": patterns,
        "pairs": pairs,
        "window": args.window,  # None: by size
        "bidirectional": args.bidirectional,
    }


def check_counts(
    primitives: Sequence[str],
    sizes: Sequence[int],
    dtypes: Sequence[str],
    world_sizes: Sequence[int],
) -> str | None:
    """Refuse sizes that leave a rank no element; return a note per way of rounding (facts'
    `rounding`) when primitives round a size down (gather types to n whole 16-byte chunks, gather
    to n whole elements: METHOD: say so when rounding), else None."""
    rounded: dict[str, dict[str, str]] = {}  # how it rounds -> primitive -> first example
    for name in primitives:
        facts = FACTS[name]
        for n in world_sizes:
            for dtype in dtypes:
                itemsize = DTYPE_BYTES[dtype]
                step = facts.count_multiple(n, itemsize) * itemsize
                if min(sizes) < step:
                    raise UsageError(
                        f"size {min(sizes)} B leaves a rank no {dtype} element in {name} at "
                        f"world size {n}: use sizes of at least {step} B"
                    )
                size = next((s for s in sizes if s % step), None)
                same = rounded.setdefault(facts.rounding, {})
                if size is not None and name not in same:
                    example = f"{format_size(size)} -> {size - size % step} B"
                    same[name] = f"{example} for {dtype} at world size {n}"
    notes = [
        f"note: {', '.join(names)} round sizes down to {rounding}, as nccl-tests "
        f"(e.g. {next(iter(names.values()))}); "
        "size_bytes is what was measured, requested_bytes what was asked for"
        for rounding, names in rounded.items()
        if names
    ]
    return "\n".join(notes) or None


def build_workload(
    primitives: tuple[str, ...], comm: CommArgs, args: PrimitiveArgs, launch: ResolvedLaunch
) -> CommSpec:
    """The CommSpec of a primitive command or sweep; prints a note for every rounded size."""
    root, options = build_primitive_options(primitives, args, launch.world_sizes)
    comm = uneven.fit_comm(primitives, options, comm, launch.backend)
    workload = build_comm_spec(primitives, comm, launch, root, options)
    note = check_counts(primitives, workload.sizes, workload.dtypes, launch.world_sizes)
    if note:
        print(note, file=sys.stderr)
    for line in emulation_notes(primitives, launch.backend):
        print(line, file=sys.stderr)
    return workload
