"""`--table nccl-tests`: results.csv rows in nccl-tests' own terminal layout, so that the scripts
that read nccl-tests' output (columns by position, `grep "Avg bus bandwidth"`) read distbench's.
The line formats are nccl-tests' (src/util.cu: writeResultHeader, writeBenchmarkLinePreamble,
writeBenchmarkLineBody, getFloatStr, writeResultFooter), printf formats kept as they are:

    #       size         count      type   redop    root     time   algbw   busbw #wrong ...
         1048576        262144     float     sum      -1    812.3    1.29    1.29      0 ...
    # Out of bounds values : 0 OK
    # Avg bus bandwidth    : 1.29118

What differs, and the `#` lines above each table say it:
- time is the rows' time_us_mean: the mean over the trials of one trial's mean per op (`iters`
  ops back to back), of the slowest rank. nccl-tests' is the mean per op of one timed loop,
  averaged over the ranks. algbw = size / that time and busbw = algbw x the busbw factor are
  computed from it here (results.csv's algbw_GBps and busbw_GBps are the p50's).
- `# Out of bounds values` counts the rows whose --check found wrong elements (nccl-tests: the
  tests, out-of-place and in-place, with wrong elements on a process). Rows not checked are not
  counted as OK: without --check the line says N/A, and 'k of n rows checked' where only some were.
- `# Avg bus bandwidth` is, as nccl-tests', the mean of every busbw the table prints (each size,
  dtype, op and root, out-of-place and in-place); one table (one footer) per primitive, world
  size, mode and case (api, pattern, pair), where nccl-tests prints one per run.
- A placement distbench did not measure prints '-' in each of its four columns (nccl-tests' default
  measures both; distbench's allreduce measures out-of-place unless --placement says more).
"""

# nccl-tests' printf formats are kept as they are (%-formatting), so they can be read against its
# source line by line:
# ruff: noqa: UP031

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from distbench.parse import NCCL_DTYPE_NAMES
from distbench.tables import format_number, group_rows

Row = dict[str, str]
PER_RANK_COUNT = {"all_gather", "reduce_scatter", "all_to_all", "gather"}
"""Primitives whose nccl-tests `count` is one rank's elements (their getCollByteCount's
paramcount is count/nranks); distbench's `count` is the elements of size_bytes, the whole buffer."""


def nccl_count(primitive: str, count: int, world_size: int) -> int:
    """The `count` nccl-tests prints for a row of `count` elements (distbench's column)."""
    return count // world_size if primitive in PER_RANK_COUNT else count


GROUP = ("primitive", "backend", "device", "world_size", "nnodes", "timer", "mode", "api")
CASE = ("pattern", "src", "dst")
"""A table per value of these (and of --env), named in its `#` title."""

COLUMNS = "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s"
HEADER = (
    "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
    % ("", "", "", "", ""),
    COLUMNS
    % ("size", "count", "type", "redop", "root", *("time", "algbw", "busbw", "#wrong") * 2, 0, ""),
    COLUMNS % ("(B)", "(elements)", "", "", "", *("(us)", "(GB/s)", "(GB/s)", "") * 2, 0, ""),
)
"""writeResultHeader's three lines (no per-iteration timing, no timestamps)."""
NOT_MEASURED = "  %7s  %6s  %6s  %6s" % ("-", "-", "-", "-")


def float_cell(value: float, width: int) -> str:
    """nccl-tests' getFloatStr: two decimals, fewer where the number does not fit the width."""
    for spec in (".2f", ".1f", ".0f"):
        text = f"{value:{width}{spec}}"
        if len(text) <= width:
            return text
    return f"{value:{width}.1e}" if width >= 7 else f"{value:{width}.0e}"


def number(row: Row, name: str) -> float:
    """A cell as a float; NaN where it is empty or missing."""
    try:
        return float(row.get(name) or "nan")
    except ValueError:
        return math.nan


def bandwidths(row: Row) -> tuple[float, float]:
    """(algbw, busbw) in GB/s from time_us_mean; NaN where the row has no bandwidth (world size
    1: nothing moves) or no mean."""
    mean = number(row, "time_us_mean")
    if not row.get("busbw_GBps") or not mean > 0:
        return math.nan, math.nan
    algbw = int(row["size_bytes"]) / mean / 1e3  # bytes/us = 1e6 B/s; GB/s = 1e9 B/s
    return algbw, algbw * number(row, "busbw_factor")


def body(row: Row) -> str:
    """writeBenchmarkLineBody: time, algbw, busbw, #wrong (N/A: not checked)."""
    algbw, busbw = bandwidths(row)
    cells = [float_cell(number(row, "time_us_mean"), 7)]
    cells += ["N/A" if math.isnan(bw) else float_cell(bw, 6) for bw in (algbw, busbw)]
    wrong = int(row.get("wrong") or -1)
    if wrong < 0:
        return "  %7s  %6s  %6s    N/A" % tuple(cells)
    return "  %7s  %6s  %6s  %6g" % (cells[0], cells[1], cells[2], wrong)


@dataclass
class Line:
    """One printed line: a size, dtype, op and root, its out-of-place and in-place rows."""

    key: tuple[str, ...]
    rows: dict[str, Row] = field(default_factory=dict)

    def text(self) -> str:
        size, count, dtype, op, root = self.key
        preamble = "%12li  %12li  %8s  %6s  %6s" % (
            int(size),
            int(count),
            NCCL_DTYPE_NAMES.get(dtype, dtype),
            op or "none",
            "%6i" % int(root or -1),
        )
        parts = [body(self.rows[p]) if p in self.rows else NOT_MEASURED for p in ("out", "in")]
        return preamble + "".join(parts)


def build_lines(group: Sequence[Row]) -> list[Line]:
    """Rows paired by (size, count, dtype, op, root): out-of-place and in-place side by side."""
    lines: list[Line] = []
    for row in group:
        primitive, world_size = row.get("primitive", ""), int(row.get("world_size") or 1)
        count = str(nccl_count(primitive, int(row.get("count") or 0), world_size))
        key = (row.get("size_bytes", ""), count, *(row.get(k, "") for k in ("dtype", "op", "root")))
        placement = "in" if row.get("placement") == "in" else "out"
        line = next((x for x in lines if x.key == key and placement not in x.rows), None)
        if line is None:
            line = Line(key)
            lines.append(line)
        line.rows[placement] = row
    return lines


def average_busbw(group: Sequence[Row]) -> float:
    """The `# Avg bus bandwidth` figure: the mean of every busbw printed; NaN where none is."""
    values = [bw for bw in (bandwidths(row)[1] for row in group) if not math.isnan(bw)]
    return sum(values) / len(values) if values else math.nan


def footer(group: Sequence[Row]) -> list[str]:
    """writeResultFooter's lines, honest where nccl-tests' would not be."""
    checked = [row for row in group if int(row.get("wrong") or -1) >= 0]
    failed = sum(1 for row in checked if int(row["wrong"]) > 0)
    if not checked:
        bounds = "N/A (not checked: add --check or -c 1)"
    else:
        bounds = "%d %s" % (failed, "FAILED" if failed else "OK")
        if len(checked) < len(group):
            bounds += f" ({len(checked)} of {len(group)} rows checked)"
    average = average_busbw(group)
    shown = "N/A (no bandwidth: nothing moves at world size 1)" if math.isnan(average) else ""
    return [
        "# %-20s : %s" % ("Out of bounds values", bounds),
        "# %-20s : %s " % ("Avg bus bandwidth", shown or "%g" % average),
        "#",
    ]


def title(group: Sequence[Row], env: str) -> list[str]:
    """The `#` lines above a table: what was measured and which time it shows."""
    first = group[0]
    named = [f"{name}={first[name]}" for name in (*GROUP[1:], *CASE) if first.get(name)]
    if first["mode"] == "latency":
        time = f"the mean of {first['samples']} ops, each isolated by a barrier (latency mode)"
    else:
        loop = f"{first['iters']} back to back"
        time = f"the mean over {first['trials']} trials of a trial's mean per op ({loop})"
    factors = {row["busbw_factor"] for row in group}
    factor = format_number(first["busbw_factor"], ".4g") if len(factors) == 1 else "per row"
    lines = [
        f"# {first['primitive']}  " + "  ".join(named),
        f"# time = time_us_mean: {time}, slowest rank; nccl-tests' time is the mean per op of "
        "one loop averaged over ranks",
        f"# algbw = size / time, busbw = algbw x {factor} (results.csv's bandwidths use the p50)",
        "# Out of bounds values: rows whose --check found wrong elements; Avg bus bandwidth: the "
        "mean of the busbw column",
    ]
    return [*lines, f"# env: {env}"] if env else lines


def render_nccl_table(rows: Sequence[Row]) -> str:
    """One nccl-tests table per group of rows (GROUP, CASE, --env), in the order given."""
    blocks = []
    filled = [{**dict.fromkeys((*GROUP, *CASE), ""), **row} for row in rows]  # v1 rows: no api
    for (*_, env), group in group_rows(filled, (*GROUP, *CASE)).items():
        lines = [line.text() for line in build_lines(group)]
        blocks.append("\n".join([*title(group, env), "#", *HEADER, *lines, *footer(group)]))
    return "\n\n".join(blocks)
