"""Parsers for every string a user types. Each raises UsageError with one line saying what is wrong
and what would be right; the CLI turns that into exit code 2.

Sizes follow nccl-tests and PARAM: K, M, G are binary (1K = 1024 bytes), as are KiB, MiB, GiB and
KB, MB, GB. A unit ending in a lowercase b ('64Mb', '8b') counts bits and is refused.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

DTYPES = ("float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64")
"""Dtypes that gloo and NCCL both reduce (int16, bool and float8 fail in gloo)."""

DTYPE_BYTES = {
    "float32": 4,
    "float64": 8,
    "float16": 2,
    "bfloat16": 2,
    "int8": 1,
    "uint8": 1,
    "int32": 4,
    "int64": 8,
}
"""Bytes per element (torch's itemsize), known without importing torch."""

NCCL_DTYPE_NAMES = {
    "float32": "float",
    "float16": "half",
    "float64": "double",
    "bfloat16": "bfloat16",
    "int8": "int8",
    "uint8": "uint8",
    "int32": "int32",
    "int64": "int64",
}
"""distbench dtype -> nccl-tests' name for it (its test_typenames, src/common.cu): `--table
nccl-tests` and `export --format nccl-tests-json` write it, -d/--dtype reads it (DTYPE_ALIASES
has float, half, double)."""

DTYPE_ALIASES = {
    "fp32": "float32",
    "float": "float32",
    "fp64": "float64",
    "double": "float64",
    "fp16": "float16",
    "half": "float16",
    "bf16": "bfloat16",
    "int": "int32",
    "long": "int64",
}

OPS = ("sum", "prod", "max", "min", "avg")
BACKENDS = ("gloo", "nccl", "auto")
DEVICES = ("cpu", "cuda", "auto")
MODES = ("throughput", "latency")

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gib": 1 << 30,
    "t": 1 << 40,
    "tib": 1 << 40,
}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


MAX_SIZE_BYTES = 1 << 50
"""1 PiB: larger sizes are typos (and beyond a float's exact integers soon after)."""


_ONE_LINE = {code: repr(chr(code))[1:-1] for code in (*range(32), 127)}
"""Control characters the user typed, shown escaped so the message stays one line."""


class UsageError(ValueError):
    """Bad user input: the message is the one line the user sees."""

    def __init__(self, message: str) -> None:
        super().__init__(str(message).translate(_ONE_LINE))


def parse_size(text: str) -> int:
    """'64M' -> 67108864. Binary suffixes K/M/G/T (or KiB/MiB/GiB/TiB, KB/MB/GB/TB), plain
    bytes, optional B; a lowercase b (a bit: '64Mb') is refused."""
    match = _SIZE_RE.match(text)
    hint = (
        "use a number of bytes with an optional K, M, G or T suffix (binary: 1K = 1024), e.g. 64M"
    )
    if match is None:
        raise UsageError(f"'{text}' is not a size: {hint}")
    number, unit = match.groups()
    if unit.endswith("b"):  # '64Mb' is 64 megabits: refused, never read as bytes
        raise UsageError(
            f"'{text}' is in bits (b is a bit, B a byte) and a bit count is not a size: sizes are "
            "bytes, M is MiB (1M = 1048576 bytes), e.g. 64M or 64MiB"
        )
    unit_key = unit.lower()
    if unit_key.endswith("b") and unit_key not in _UNITS:
        unit_key = unit_key[:-1]  # 'KB' and 'MB' read as K and M, the nccl-tests way
    if unit_key not in _UNITS:
        raise UsageError(f"'{text}' has an unknown unit '{unit}': {hint}")
    value = float(number) * _UNITS[unit_key]
    if not value <= MAX_SIZE_BYTES:  # also inf, from hundreds of digits
        raise UsageError(f"'{text}' is larger than 1024T (2**50 bytes): {hint}")
    if value != int(value):
        raise UsageError(f"'{text}' is not a whole number of bytes: {hint}")
    if value < 1:
        raise UsageError(f"'{text}' is not a positive size: {hint}")
    return int(value)


def parse_list(text: str, what: str, example: str = "") -> list[str]:
    """Split a comma-separated list, refusing empty items; `example`: a valid list of `what`."""
    items = [item.strip() for item in text.split(",")]
    if not text.strip() or any(not item for item in items):
        hint = f", e.g. {example}" if example else ""
        raise UsageError(f"'{text}' is not a list of {what}: separate items with commas{hint}")
    return items


def parse_sizes(text: str) -> list[int]:
    """'1K,1M,64M' -> sorted unique byte counts."""
    return sorted({parse_size(item) for item in parse_list(text, "sizes", example="1M,64M")})


def build_size_ladder(min_size: int, max_size: int, factor: int) -> list[int]:
    """min, min*factor, ... up to max (inclusive), the nccl-tests -b/-e/-f ladder."""
    if min_size < 1:
        raise UsageError(f"--min-size {min_size} must be at least 1 byte")
    if min_size > max_size:
        raise UsageError(f"--min-size {min_size} is larger than --max-size {max_size}")
    if factor < 2:
        raise UsageError(f"--factor {factor} must be 2 or more, e.g. --factor 2")
    sizes = []
    size = min_size
    while size <= max_size:
        sizes.append(size)
        size *= factor
    return sizes


def parse_int(text: str, what: str, minimum: int = 1) -> int:
    """A whole number no smaller than `minimum`."""
    try:
        value = int(text.strip())
    except ValueError:
        raise UsageError(
            f"'{text}' is not a whole number: {what} takes e.g. {minimum + 1}"
        ) from None
    if value < minimum:
        raise UsageError(f"{what} must be at least {minimum}, got {value}")
    return value


def parse_world_sizes(text: str) -> list[int]:
    """'2,4' -> [2, 4]: each a whole number of ranks, at least 1."""
    items = parse_list(text, "world sizes", example="1,2,4")
    return sorted({parse_int(item, "a world size") for item in items})


def parse_choice(text: str, choices: tuple[str, ...], what: str) -> str:
    """One of a fixed set, case-insensitive."""
    value = text.strip().lower()
    if value not in choices:
        raise UsageError(f"unknown {what} '{text}': choose one of {', '.join(choices)}")
    return value


def parse_dtype(text: str) -> str:
    """'bf16' -> 'bfloat16'; refuses dtypes the backends cannot reduce."""
    value = text.strip().lower().removeprefix("torch.")
    value = DTYPE_ALIASES.get(value, value)
    if value not in DTYPES:
        raise UsageError(f"unknown dtype '{text}': choose from {', '.join(DTYPES)}")
    return value


def parse_dtypes(text: str) -> list[str]:
    return list(
        dict.fromkeys(
            parse_dtype(item) for item in parse_list(text, "dtypes", example="float32,bfloat16")
        )
    )


def parse_modes(text: str) -> list[str]:
    """'throughput', 'latency', 'throughput,latency' or 'both'."""
    if text.strip().lower() == "both":
        return list(MODES)
    items = parse_list(text, "modes", example="throughput,latency")
    chosen = [parse_choice(item, (*MODES, "both"), "mode") for item in items]  # both: every one
    return list(dict.fromkeys(m for c in chosen for m in (MODES if c == "both" else (c,))))


def parse_label(text: str) -> str:
    """Labels go into directory names: letters, digits, '.', '_' and '-'."""
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", text):
        raise UsageError(
            f"label '{text}' is not allowed: use up to 64 letters, digits, '.', '_' or '-'"
        )
    return text


def format_significant(value: float, digits: int = 3) -> str:
    """`digits` significant digits in plain decimals, without exponent or thousands separator
    (distbench prints none anywhere): 0.000123, 0.0205, 17.1, 231; whole numbers of `digits` or
    more digits keep every digit (123457). Finite values only: callers say what NaN means."""
    if value == 0:
        return "0"
    rounded = float(f"{value:.{digits - 1}e}")  # 9.996 -> 10.0: count digits after rounding
    magnitude = math.floor(math.log10(abs(rounded)))
    if magnitude >= digits - 1:
        return f"{value:.0f}"
    text = f"{rounded:.{min(digits - 1 - magnitude, 15)}f}"
    # below 5e-16 (a float's residue) the digits are all zeros: "0", not 0.000000000000000
    return "0" if float(text) == 0 else text


SIZE_UNITS = (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10))
"""The suffixes sizes print with, largest first."""


def format_size(size_bytes: int) -> str:
    """67108864 -> '64M' when exact, else bytes: the inverse of parse_size for table output."""
    for suffix, unit in SIZE_UNITS:
        if size_bytes >= unit and size_bytes % unit == 0:
            return f"{size_bytes // unit}{suffix}"
    return str(size_bytes)


ROUNDED_DOWN = 0.05
"""A measured size less than 5 % below the size asked for is that size rounded down to whole
elements per rank (an all_gather at 3 ranks measures 64K as 65,520 bytes, 1K as 1,008; 64K at
1,000 ranks is 2.3 % below); a ladder's steps are 2x or more."""


def asked_size(size_bytes: int, requested_bytes: object) -> int:
    """The size a row was asked for where its measured size is that one rounded down
    (ROUNDED_DOWN), else the measured size (a primitive that measures another buffer than the
    one asked for keeps its own). `requested_bytes` as a row holds it: an int, a float or text;
    None, NaN, pandas' NA or empty where a run has none (the measured size then)."""
    try:
        requested = int(float(str(requested_bytes)))
    except (ValueError, OverflowError):  # 'None', 'nan', '<NA>', '': no request recorded
        return size_bytes
    if requested and 0 <= requested - size_bytes < ROUNDED_DOWN * requested:
        return requested
    return size_bytes


def format_asked_size(size_bytes: object, requested_bytes: object = None) -> str:
    """A row's size as every label of a report prints it: the size asked for (asked_size) in
    format_size's spelling, `1K` for the 1,020 bytes an all_gather at 3 ranks measures of 1K
    (only CSV and JSON exports keep raw byte counts); '' for a cell without a size (NaN)."""
    try:
        size = int(float(str(size_bytes)))
    except (ValueError, OverflowError):
        return ""
    return format_size(asked_size(size, requested_bytes))


def missing_file_hint(path: str | Path) -> str:
    """What to say of a relative path that names no file here: where distbench's own copy is,
    when it was installed from a clone that has one (`--config ci/sweep-example.toml`, as the
    help and the manual write it, typed outside the clone's root); else where it was looked for."""
    path = Path(path)
    here = Path.cwd()
    if path.is_absolute():
        return "no such file"
    clone = Path(__file__).resolve().parent.parent  # bench/ -> the clone (an editable install)
    own = clone / path
    if own.is_file() and clone != here.resolve():
        return f"no such file in {here}; distbench's own copy is {own}: give that path"
    return f"no such file in {here}"


def ranks_label(ranks: tuple[int, ...]) -> str:
    """The `ranks` cell: (0, 1, 2, 3) -> '0-3'; a non-contiguous set is listed with ';'. Here,
    torch-free, so the primitives (send_recv's src/dst) and the row builders share it without
    importing the rank-side reductions of distbench.ranks."""
    if ranks and list(ranks) == list(range(ranks[0], ranks[-1] + 1)):
        return f"{ranks[0]}-{ranks[-1]}" if len(ranks) > 1 else str(ranks[0])
    return ";".join(str(r) for r in ranks)
