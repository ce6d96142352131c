"""nccl-tests-like tables for the terminal, from results.csv rows (strings, as csv reads them).

The layout is nccl-tests' own (fixed-width columns, a `#` header); the numbers are every table's
(distbench.tables.format_number): bandwidths keep BANDWIDTH_DIGITS significant digits (0.00512
GB/s, not 0.000), times two decimals, no thousands separator. An empty cell (a bandwidth at world
size 1, where nothing moves) prints as '-'."""

from __future__ import annotations

from collections.abc import Sequence

from distbench.parse import format_size
from distbench.tables import BANDWIDTH_DIGITS, format_number, group_rows

COLUMNS = (
    ("size", 10),
    ("count", 12),
    ("dtype", 9),
    ("op", 5),
    ("mode", 11),
    ("time_us", 11),
    ("algbw_GBps", 11),
    ("busbw_GBps", 11),
    ("#wrong", 7),
)


WIDTHS = {
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


def cell(row: dict[str, str], name: str) -> str:
    """An extra column's cell; ci_pct is the CI's larger half-width in % of the p50, e.g. +-1.8."""
    if name == "trials":
        return row.get("trials_run") or row.get("trials", "")
    if name == "msg_rate_per_s":
        return format_number(row.get(name), ".0f")
    if name == "recv_bytes_max":
        return format_size(int(float(row[name]))) if row.get(name) else "-"
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


def render_table(rows: Sequence[dict[str, str]]) -> str:
    """One table per (primitive, world size) group of rows, in the order given."""
    groups = group_rows(rows, ("primitive", "backend", "device", "world_size", "timer"))
    blocks = []
    for (primitive, backend, device, world_size, timer, env), group in groups.items():
        header = (
            f"# {primitive}  backend={backend}  device={device}  world_size={world_size}  "
            f"timer={timer}  time=p50 of max over ranks  busbw factor="
            f"{factor_text(group)}"
        )
        header += f"\n# env: {env}" if env else ""
        api = group[0].get("api", "c10d")  # --api: one per launch
        header += f"\n# api: {api}" if api != "c10d" else ""
        header += "\n# buffers: symmetric" if group[0].get("buffers") == "symmetric" else ""
        if world_size == "1":
            header += "\n# world size 1: nothing moves between ranks, so no bandwidth (-)"
        extra = [
            name for name in ("root", "src", "dst", "pattern") if any(r.get(name) for r in group)
        ]
        extra += ["placement"] if any(r.get("placement") == "in" for r in group) else []
        if primitive == "all_to_allv":  # uneven splits: the busiest receiver and the imbalance
            extra += ["recv_bytes_max", "imbalance"]
        if any(r.get("pattern", "").startswith("multipair") for r in group):
            extra.append("msg_rate_per_s")  # osu_mbw_mr's figure, aggregate over pairs
        precise = any(r.get("converged") for r in group)  # --precision: how far each row got
        extra += ["trials", "ci_pct", "converged"] if precise else []
        names = [name for name, _ in COLUMNS] + extra
        # pattern holds e.g. 'bidir-window=64'
        widths = [width for _, width in COLUMNS] + [WIDTHS.get(n, 6) for n in extra]
        lines = [header, "#" + "".join(n.rjust(w) for n, w in zip(names, widths, strict=True))[1:]]
        for row in group:
            wrong = row["wrong"] if row["wrong"] != "-1" else "N/A"
            cells = [
                format_size(int(row["size_bytes"])),
                row["count"],
                row["dtype"],
                row["op"] or "-",
                row["mode"],
                format_number(row["time_us_p50"], ".2f"),
                format_number(row["algbw_GBps"], BANDWIDTH_DIGITS),
                format_number(row["busbw_GBps"], BANDWIDTH_DIGITS),
                wrong,
            ] + [cell(row, name) for name in extra]
            lines.append("".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)))
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
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
