"""`--env NAME=V1,V2` (repeatable): environment variables as sweep axes. Every combination of the
values is one launch whose workers (only) run with them set; rows carry the combination in their
`env` column (`NAME=V ...`), which compare and report treat as part of the case."""

from __future__ import annotations

import itertools
import re

from distbench.parse import UsageError

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RESERVED = frozenset(
    {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR",
     "MASTER_PORT", "TORCHELASTIC_RUN_ID", "PYTHONUNBUFFERED"}
)  # fmt: skip
"""Variables torchrun or distbench set for every worker: sweeping them would break the launch."""
EXAMPLE = "e.g. --env NCCL_ALGO=Ring,Tree"


def parse_env_axis(text: str) -> str:
    """'NAME=V1,V2' -> the same text, checked: a variable name, one or more distinct values
    without spaces."""
    name, sep, values = text.partition("=")
    if not sep or not NAME.fullmatch(name):
        raise UsageError(f"--env '{text}' is not NAME=VALUE[,VALUE...]: {EXAMPLE}")
    if name in RESERVED:
        raise UsageError(f"--env {name}: torchrun sets it for every worker; sweep another variable")
    items = values.split(",")
    if any(not item or item != item.strip() or " " in item for item in items):
        raise UsageError(f"--env {name}: give values without spaces or empty items, {EXAMPLE}")
    if len(set(items)) < len(items):
        raise UsageError(f"--env {name}: a value is given twice in '{values}'")
    return text


def env_combinations(axes: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Every combination of the axes' values, as `NAME=VALUE` settings, the first axis slowest:
    [()] without --env."""
    names = [axis.partition("=")[0] for axis in axes]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise UsageError(f"--env {twice[0]} is given twice: list its values once, {EXAMPLE}")
    columns = [
        [f"{name}={value}" for value in axis.partition("=")[2].split(",")]
        for name, axis in zip(names, axes, strict=True)
    ]
    return [tuple(combo) for combo in itertools.product(*columns)]


def inert_env_note(names: list[str], backend: str) -> str | None:
    """A line for NCCL_* variables swept on a backend that reads none of them (gloo): their
    combinations measure the same thing, so the rows' differences are the box's noise."""
    inert = sorted({name for name in names if name.startswith("NCCL_")})
    if not inert or backend == "nccl":
        return None
    return (
        f"note: {', '.join(inert)} {'has' if len(inert) == 1 else 'have'} no effect on "
        f"{backend}, which reads no NCCL_* variable: {backend} rows that differ only in them "
        "measure the same thing, and what separates them is noise"
    )
