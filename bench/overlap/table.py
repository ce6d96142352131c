"""`distbench overlap`'s terminal table (torch-free): one line per case as it lands."""

from __future__ import annotations

from collections.abc import Sequence

from distbench.parse import format_size
from distbench.tables import format_number, render_rows


def render_overlap_table(rows: Sequence[dict[str, str]]) -> str:
    """Collective, size, matmul N x iters, threads, the three phases' p50s and the figures."""
    header = [
        "collective", "size", "matmul", "threads", "mode", "compute_us", "comm_us", "both_us",
        "efficiency", "compute_x", "comm_x",
    ]  # fmt: skip
    lines = [
        [
            row["collective"],
            format_size(int(row["size_bytes"])),
            f"{row['compute_n']}x{row['compute_iters']}",
            row["compute_threads"],
            row["mode"],
            *(format_number(row[f"t_{p}_us"], 4) for p in ("compute", "comm", "both")),
            *(f"{float(row[c]):.2f}" for c in ("overlap_efficiency", "compute_slowdown")),
            f"{float(row['comm_slowdown']):.2f}",
        ]
        for row in rows
    ]
    numeric = ("compute_us", "comm_us", "both_us", "efficiency", "compute_x", "comm_x")
    return "\n".join(render_rows(header, lines, numeric=numeric))
