"""nccl-tests-like tables for the terminal, from results.csv rows (strings, as csv reads them).

The layout is nccl-tests' own (fixed-width columns, a `#` header); the numbers are every table's
(distbench.tables.format_number): bandwidths keep BANDWIDTH_DIGITS significant digits (0.00512
GB/s, not 0.000), times two decimals, no thousands separator. An empty cell (a bandwidth at world
size 1, where nothing moves) prints as '-'."""

from __future__ import annotations

from collections.abc import Sequence

from distbench.parse import format_size
from distbench.tables import BANDWIDTH_DIGITS, format_number

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


def render_table(rows: Sequence[dict[str, str]]) -> str:
    """One table per (primitive, world size) group of rows, in the order given."""
    groups: dict[tuple[str, ...], list[dict[str, str]]] = {}
    for row in rows:
        key = (row["primitive"], row["backend"], row["device"], row["world_size"], row["timer"])
        groups.setdefault(key, []).append(row)
    blocks = []
    for (primitive, backend, device, world_size, timer), group in groups.items():
        header = (
            f"# {primitive}  backend={backend}  device={device}  world_size={world_size}  "
            f"timer={timer}  time=p50 of max over ranks  busbw factor="
            f"{format_number(group[0]['busbw_factor'], '.3g')}"
        )
        if world_size == "1":
            header += "\n# world size 1: nothing moves between ranks, so no bandwidth (-)"
        extra = [
            name for name in ("root", "src", "dst", "pattern") if any(r.get(name) for r in group)
        ]
        names = [name for name, _ in COLUMNS] + extra
        # pattern holds e.g. 'bidir-window=64'
        widths = [width for _, width in COLUMNS] + [17 if n == "pattern" else 6 for n in extra]
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
            ] + [row.get(name, "") for name in extra]
            lines.append("".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
