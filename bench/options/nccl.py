"""nccl-tests' habits on the primitive commands and sweep: its short flags, its dtype names,
`--dtype all` and `--table nccl-tests`. Each nccl-tests flag is a second spelling of the distbench
option that does the same (NCCL_FLAGS; docs/commands.md lists what differs), so `-b 8 -e 128M -f 2`
and `--min-size 8 --max-size 128M --factor 2` build the same spec. Torch-free (the CLI process).

    distbench allreduce -b 8 -e 128M -f 2 -n 20 -w 5 -d float -c 1 --table nccl-tests
"""

from __future__ import annotations

from collections.abc import Sequence

from distbench.options.opt import choice, integer, text
from distbench.parse import DTYPES, NCCL_DTYPE_NAMES, UsageError, parse_dtypes, parse_int
from distbench.primitives.facts import FACTS

NCCL_FLAGS = {
    "-b": "--min-size",
    "-e": "--max-size",
    "-f": "--factor",
    "-n": "--iters",
    "-w": "--warmup",
    "-d": "--dtype",
    "-c": "--check",
    "-G": "--cuda-graph",
}
"""nccl-tests' short flag -> the distbench option it spells (-c takes nccl-tests' 0/1, --check is
a switch; every other one takes the long option's values)."""

ALL = "all"
"""--dtype all: every dtype the run's primitives take (resolve_dtypes)."""


NCCL_ONLY_DTYPES = {"uint32", "uint64", "f8e4m3", "f8e5m2", "char"}
"""nccl-tests types distbench does not time (gloo cannot reduce them; 'char' is its int8)."""

TABLES = ("default", "nccl-tests")
TABLE_OPTION = choice(
    "Terminal table: default (p50 of the slowest rank, spread, sizes as 1K/1M), or nccl-tests "
    "(its columns and line formats: sizes in bytes, out-of-place and in-place side by side, the "
    "mean time, '# Out of bounds values' and '# Avg bus bandwidth' lines).",
    TABLES,
    "table",
)
NCCL_CHECK_OPTION = integer(
    "nccl-tests' -c N (its --check N): 1 or more verifies the results as --check does (once), "
    "0 does not.",
    minimum=0,
    parse=lambda value: parse_int(value, "-c", 0),
    decls=("-c", "--nccl-check"),
)


def parse_dtype_option(text: str) -> tuple[str, ...]:
    """--dtype / -d: a comma list of dtypes (distbench's or nccl-tests' names: float, half,
    double ...), or `all` (kept as ('all',) until resolve_dtypes knows the primitives)."""
    if text.strip().lower() == ALL:
        return (ALL,)
    for item in text.split(","):
        name = item.strip().lower()
        if name in NCCL_ONLY_DTYPES:
            known = ", ".join(dict.fromkeys((*NCCL_DTYPE_NAMES.values(), *DTYPES)))
            raise UsageError(
                f"dtype '{item.strip()}' (an nccl-tests type) is not measured by distbench: "
                f"choose from {known}, or all"
            )
    return tuple(parse_dtypes(text))


DTYPE_OPTION = text(
    "float32, bfloat16, float16, float64, int8, uint8, int32, int64 (or nccl-tests' float, half, "
    "double); a comma list sweeps; all: every one the primitives take.",
    parse_dtype_option,
    "--dtype",
    "-d",
)


def resolve_dtypes(
    dtypes: Sequence[str], primitives: Sequence[str], op: str, buffers: str = "regular"
) -> tuple[str, ...]:
    """The dtypes a run measures: as given, or for `all` every dtype the primitives take with
    this op and buffers: avg reduces floats only (parse.DTYPES are those gloo and NCCL both
    reduce), and NCCL's symmetric kernels serve the dtypes their facts name."""
    if tuple(dtypes) != (ALL,):
        return tuple(dtypes)
    taken = list(DTYPES)
    if op == "avg" and any(FACTS[name].reduces for name in primitives):
        taken = [d for d in taken if d.startswith(("float", "bfloat"))]
    if buffers == "symmetric":
        for name in primitives:
            served = FACTS[name].symmetric
            if served is not None and served.dtypes:
                taken = [d for d in taken if d in served.dtypes]
    return tuple(taken)


def resolve_check(check: bool, count: int | None) -> bool:
    """--check, or nccl-tests' -c N (N >= 1: verify; 0: do not); both given must agree."""
    if count is None:
        return check
    if check and count == 0:
        raise UsageError("--check and -c 0 disagree: give one of them (-c 1 is --check)")
    return count > 0
