"""`distbench rpc`'s terminal table (torch-free): one line per pattern and size as they land."""

from __future__ import annotations

from collections.abc import Sequence

from distbench.parse import format_size
from distbench.tables import format_number, render_rows, title_line


def render_rpc_table(rows: Sequence[dict[str, str]]) -> str:
    """Pattern, size, time per call (p50), calls/s from it, and algbw."""
    header = ["ranks", "pattern", "size", "mode", "time_us_p50", "calls_per_s", "algbw_GBps"]
    lines = [
        [
            row["world_size"],
            row["pattern"],
            format_size(int(row["size_bytes"])),
            row["mode"],
            format_number(row["time_us_p50"], 4),
            format_number(1e6 / float(row["time_us_p50"]), 4),
            format_number(row["algbw_GBps"], 4),
        ]
        for row in rows
    ]
    title = title_line("rpc", rows, "p50 of the slowest caller's time per call (TensorPipe)")
    numeric = ("time_us_p50", "calls_per_s", "algbw_GBps")
    return "\n".join([title, *render_rows(header, lines, numeric=numeric)])
