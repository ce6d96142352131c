"""nccl-tests-like tables for the terminal, from results.csv rows (strings, as csv reads them).

The layout is nccl-tests' own (fixed-width columns, a `#` header); the numbers are every table's
(distbench.tables.format_number): bandwidths keep BANDWIDTH_DIGITS significant digits (0.00512
GB/s, not 0.000), times two decimals, no thousands separator. An empty cell (a bandwidth at world
size 1, where nothing moves) prints as '-'."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from distbench.parse import SIZE_UNITS, format_significant, format_size
from distbench.tables import BANDWIDTH_DIGITS, format_number, group_rows

Row = dict[str, str]

WIDE_SPREAD = 0.5
"""A spread above this share of the p50 is flagged '!': two runs of such a row can differ by
about as much (the same command once gave 3282 us and then 1173 us at 1M on a loaded box)."""


def spread_share(row: Row) -> float:
    """(max - min) / p50 of the row's trials; in latency mode (p95 - min) / p50 of its isolated
    ops (their max is the tail of thousands of ops, not a trial's). NaN where a cell is missing."""
    high_column = "time_us_p95" if row.get("mode") == "latency" else "time_us_max"
    try:
        p50, low, high = (float(row[k]) for k in ("time_us_p50", "time_us_min", high_column))
    except (KeyError, ValueError):
        return math.nan
    return (high - low) / p50 if p50 > 0 else math.nan


def spread_cell(row: Row) -> str:
    """The spread in % of the p50, '!' after it when wide (above WIDE_SPREAD)."""
    share = spread_share(row)
    if math.isnan(share):
        return "-"
    return format_number(share * 100, ".0f") + "%" + ("!" * (share > WIDE_SPREAD))


@dataclass(frozen=True)
class Column:
    """One column of the table: its name (the `#` header), width, and how a row's cell reads."""

    name: str
    width: int
    cell: Callable[[Row], str]


COLUMNS = (
    Column("size", 10, lambda row: format_size(int(row["size_bytes"]))),
    Column("count", 12, lambda row: row["count"]),
    Column("dtype", 9, lambda row: row["dtype"]),
    Column("op", 5, lambda row: row["op"] or "-"),
    Column("mode", 11, lambda row: row["mode"]),
    Column("time_us", 11, lambda row: format_number(row["time_us_p50"], ".2f")),
    Column("spread", 8, spread_cell),
    Column("algbw_GBps", 11, lambda row: format_number(row["algbw_GBps"], BANDWIDTH_DIGITS)),
    Column("busbw_GBps", 11, lambda row: format_number(row["busbw_GBps"], BANDWIDTH_DIGITS)),
    Column("#wrong", 7, lambda row: row["wrong"] if row["wrong"] != "-1" else "N/A"),
)
"""Every table's columns, in order; extra_columns adds those only some rows have."""


WIDTHS = {
    "api": 19,
    "pattern": 27,
    "recv_bytes_max": 15,
    "imbalance": 10,
    "placement": 10,
    "msg_rate_per_s": 15,
    "trials": 7,
    "ci_pct": 8,
    "converged": 10,
}
"""Widths of the columns shown only when some row has them (6 otherwise)."""


def bytes_cell(size_bytes: int) -> str:
    """A byte count in the size column's units: exact as the sizes print (`9471K`), else 3
    significant digits of the largest unit it reaches (1461152 -> `1.39M`), never raw bytes
    beside suffixed ones."""
    exact = format_size(size_bytes)
    if not exact.isdigit() or size_bytes < 1024:
        return exact
    # the largest unit it reaches once rounded (1048572 reads 1.00M, not 1024K)
    suffix, unit = next(
        (s, u) for s, u in SIZE_UNITS if float(format_significant(size_bytes / u)) >= 1
    )
    return f"{format_significant(size_bytes / unit)}{suffix}"


def cell(row: dict[str, str], name: str) -> str:
    """An extra column's cell; ci_pct is the CI's larger half-width in % of the p50, e.g. +-1.8."""
    if name == "trials":
        return row.get("trials_run") or row.get("trials", "")
    if name == "msg_rate_per_s":
        return format_number(row.get(name), ".0f")
    if name == "recv_bytes_max":
        return bytes_cell(int(float(row[name]))) if row.get(name) else "-"
    if name == "imbalance":
        return format_number(row.get(name), ".2f")
    if name != "ci_pct":
        return row.get(name, "")
    try:
        p50, low, high = (float(row[k]) for k in ("time_us_p50", "ci_low_us", "ci_high_us"))
    except (KeyError, ValueError):
        return "-"
    if not (p50 > 0 and low == low and high == high):  # NaN: too few samples for an interval
        return "-"
    return "+-" + format_number(max(p50 - low, high - p50) / p50 * 100, ".1f")


def factor_text(group: Sequence[dict[str, str]]) -> str:
    """The group's busbw factor, or 'per row' where it differs (alltoallv: per split)."""
    factors = {row["busbw_factor"] for row in group}
    return format_number(group[0]["busbw_factor"], ".3g") if len(factors) == 1 else "per row"


def extra_columns(primitive: str, group: Sequence[Row]) -> list[Column]:
    """The columns only some tables need (their cells from `cell`)."""
    extra = ["api"] if len({r.get("api", "c10d") for r in group}) > 1 else []  # --api a,b
    extra += [name for name in ("root", "src", "dst", "pattern") if any(r.get(name) for r in group)]
    extra += ["placement"] if any(r.get("placement") == "in" for r in group) else []
    if primitive == "all_to_allv":  # uneven splits: the busiest receiver and the imbalance
        extra += ["recv_bytes_max", "imbalance"]
    if any(r.get("pattern", "").startswith("multipair") for r in group):
        extra.append("msg_rate_per_s")  # osu_mbw_mr's figure, aggregate over pairs
    if any(r.get("converged") for r in group):  # --precision: how far each row got
        extra += ["trials", "ci_pct", "converged"]
    # pattern holds e.g. 'bidir-window=64'
    return [Column(name, WIDTHS.get(name, 6), cell_of(name)) for name in extra]


def cell_of(name: str) -> Callable[[Row], str]:
    """The cell function of an extra column."""
    return lambda row: cell(row, name)


def title(primitive: str, group: Sequence[Row], env: str) -> str:
    """The `#` lines above a table: what was measured, how the cells read, and the launch."""
    first = group[0]
    latency = any(row["mode"] == "latency" for row in group)
    spread = "spread=(max-min)/p50 of the trials" + (
        ", latency: (p95-min)/p50 of the ops" if latency else ""
    )
    header = (
        f"# {primitive}  backend={first['backend']}  device={first['device']}  "
        f"world_size={first['world_size']}  timer={first['timer']}  time=p50 of max over ranks  "
        f"{spread}  busbw factor={factor_text(group)}"
    )
    header += f"\n# env: {env}" if env else ""
    apis = {row.get("api", "c10d") for row in group}  # several: a column of their own
    header += f"\n# api: {first.get('api')}" if apis != {"c10d"} and len(apis) == 1 else ""
    header += "\n# buffers: symmetric" if first.get("buffers") == "symmetric" else ""
    if first["world_size"] == "1":
        header += "\n# world size 1: nothing moves between ranks, so no bandwidth (-)"
    return header


def notes(group: Sequence[Row]) -> list[str]:
    """The `#` lines under a table: what some of its rows need the reader to know."""
    lines = []
    wide = sum(1 for row in group if spread_share(row) > WIDE_SPREAD)
    if wide:
        # --precision added the trials already, and refuses --order interleaved
        advice = (
            "ci_pct says how far --precision pinned it down; a quieter machine spreads less"
            if any(row.get("converged") for row in group)
            else "add --trials, or a quieter machine"
            if all(row.get("trial_order") in ("grouped", "interleaved") for row in group)
            else "add --trials, use --order interleaved, or a quieter machine"
        )
        lines.append(
            f"# ! {wide} of {len(group)} rows spread wide (over {WIDE_SPREAD * 100:.0f} % of the "
            f"p50): a p50 this unsteady can differ between runs by as much; {advice}"
        )
    bound = sum(1 for row in group if row.get("dispatch_bound") == "true")
    if bound:  # comm/dispatch.py
        lines.append(
            f"# {bound} of {len(group)} rows are dispatch-bound (time < 2 x the host's "
            "enqueue_us): they time torch's per-call host cost, not NCCL; --cuda-graph N "
            "times the same ops without it"
        )
    short = sum(1 for row in group if row.get("converged") == "false")
    if short:
        lines.append(
            f"# {short} of {len(group)} rows did not reach --precision: --max-trials or "
            "--budget ended them first (converged=false; ci_pct is what they reached)"
        )
        if any(row.get("converged") == "false" and row.get("mode") != "latency" for row in group):
            lines.append(
                "# ci_pct is the p50's 95 % interval; a row of one sample a trial (throughput) "
                "converges when its 99 % one stays within --precision at 3 looks in a row, so "
                "a ci_pct inside --precision can still read converged=false"
            )
    return lines


def render_table(rows: Sequence[Row]) -> str:
    """One table per (primitive, world size) group of rows, in the order given."""
    groups = group_rows(rows, ("primitive", "backend", "device", "world_size", "timer"))
    blocks = []
    for (primitive, *_, env), group in groups.items():
        columns = [*COLUMNS, *extra_columns(primitive, group)]
        cells = [[column.cell(row) for column in columns] for row in group]
        widths = [  # a cell wider than its column widens it: one space always parts two cells
            max([column.width, len(column.name) + 1, *(len(r[i]) + 1 for r in cells)])
            for i, column in enumerate(columns)
        ]
        names = "".join(column.name.rjust(w) for column, w in zip(columns, widths, strict=True))
        lines = [title(primitive, group, env), "#" + names[1:]]
        for row_cells in cells:
            lines.append("".join(c.rjust(w) for c, w in zip(row_cells, widths, strict=True)))
        blocks.append("\n".join([*lines, *notes(group)]))
    return "\n\n".join(blocks)
