"""`distbench report --reference FILE`: "is my number OK?" A small TOML of expected busbw per
primitive, size and world size, drawn as a dashed line next to the measured busbw, with the gap
in percent in a table. The figures in such a file are the user's (or a published source's), not
measured by distbench: docs/reference-values.md lists published ones with their sources.

    # expected.toml
    [[reference]]
    primitive = "all_reduce"   # torch's name, as in results.csv
    world_size = 8
    size = "1G"                # or size_bytes = 1073741824
    busbw_GBps = 360           # GB/s = 1e9 bytes/s
    source = "8xH100 NVLink, nccl-tests ring (NVIDIA)"

Here the file is read and the gap computed; its figure: figures/reference.py, its section:
sections/reference.py.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from distbench.parse import UsageError, format_size, parse_size
from distbench.primitives.facts import FACTS

KEYS = {"primitive", "world_size", "size", "size_bytes", "busbw_GBps", "source", "backend"}
EXAMPLE = (
    'e.g. [[reference]] primitive = "all_reduce", world_size = 8, size = "1G", busbw_GBps = 360'
)


@dataclass(frozen=True)
class Reference:
    """One expected busbw."""

    primitive: str
    world_size: int
    size_bytes: int
    busbw_GBps: float
    source: str = ""
    backend: str = ""
    """Empty: any backend."""


def _entry(index: int, item: Any, path: Path) -> Reference:
    where = f"--reference {path}: entry {index}"
    if not isinstance(item, dict):
        raise UsageError(f"{where} is not a table: {EXAMPLE}")
    unknown = sorted(set(item) - KEYS)
    if unknown:
        raise UsageError(f"{where} has unknown key {unknown[0]!r}: use {', '.join(sorted(KEYS))}")
    primitive = str(item.get("primitive"))
    if primitive not in FACTS:
        raise UsageError(f"{where}: primitive {primitive!r} is not one of {', '.join(FACTS)}")
    world = item.get("world_size")
    if not isinstance(world, int) or isinstance(world, bool) or world < 2:
        raise UsageError(f"{where}: world_size must be a whole number of ranks >= 2, e.g. 8")
    if ("size" in item) == ("size_bytes" in item):
        raise UsageError(f'{where}: give size (e.g. "64M") or size_bytes, exactly one')
    try:
        size = parse_size(str(item["size"])) if "size" in item else int(item["size_bytes"])
    except (UsageError, ValueError, TypeError):
        raise UsageError(
            f"{where}: size {item.get('size', item.get('size_bytes'))!r} is not a size: "
            'use e.g. "64M"'
        ) from None
    busbw = item.get("busbw_GBps")
    if not isinstance(busbw, int | float) or isinstance(busbw, bool) or not busbw > 0:
        raise UsageError(f"{where}: busbw_GBps must be a positive number of GB/s, e.g. 360")
    if not math.isfinite(float(busbw)) or size < 1:
        raise UsageError(f"{where}: busbw_GBps and size must be finite and positive")
    return Reference(
        primitive,
        world,
        size,
        float(busbw),
        str(item.get("source", "")),
        str(item.get("backend", "")),
    )


def read_references(path: Path) -> list[Reference]:
    """The file's [[reference]] entries; any problem is one line naming the file and entry."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise UsageError(f"--reference {path}: cannot read it ({error.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise UsageError(f"--reference {path} is not TOML: {error}") from None
    entries = data.get("reference")
    if not isinstance(entries, list) or not entries or set(data) - {"reference"}:
        raise UsageError(f"--reference {path} holds no [[reference]] entries: {EXAMPLE}")
    return [_entry(i, item, path) for i, item in enumerate(entries, start=1)]


def matching(lines: pd.DataFrame, ref: Reference) -> pd.DataFrame:
    """The measured rows a reference covers: its primitive, world size, size (and backend)."""
    match = lines[
        (lines["primitive"] == ref.primitive)
        & (lines["world_size"] == ref.world_size)
        & (lines["size_bytes"] == ref.size_bytes)
    ]
    return match[match["backend"] == ref.backend] if ref.backend else match


def unmatched(lines: pd.DataFrame, references: list[Reference]) -> list[Reference]:
    """The references no measured row has (a typo, or a case the runs did not measure)."""
    return [ref for ref in references if not len(lines) or matching(lines, ref).empty]


def describe(ref: Reference) -> str:
    """'all_reduce world_size=8 size=1G (backend nccl)', as the file names it."""
    backend = f" backend={ref.backend}" if ref.backend else ""
    return (
        f"{ref.primitive} world_size={ref.world_size} size={format_size(ref.size_bytes)}{backend}"
    )


def gap_frame(lines: pd.DataFrame, references: list[Reference]) -> pd.DataFrame:
    """Each measured row that a reference covers, with the gap in percent (negative: slower)."""
    rows = []
    for ref in references:
        for _, row in matching(lines, ref).iterrows():
            busbw = float(row["busbw_GBps"])
            rows.append(
                {
                    "primitive": ref.primitive,
                    "world size": ref.world_size,
                    "size": format_size(ref.size_bytes),
                    "series": str(row.get("series", row.get("source", ""))),
                    "mode": str(row["mode"]),
                    "busbw GB/s": f"{busbw:.4g}",
                    "expected GB/s": f"{ref.busbw_GBps:.4g}",
                    "gap %": f"{(busbw / ref.busbw_GBps - 1) * 100:+.1f}",
                    "reference source": ref.source,
                }
            )
    return pd.DataFrame(rows)
