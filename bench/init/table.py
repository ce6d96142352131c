"""`distbench init`'s terminal table (torch-free): one line per method and phase as they land."""

from __future__ import annotations

from collections.abc import Sequence

from distbench.tables import format_number, render_rows, title_line


def render_init_table(rows: Sequence[dict[str, str]]) -> str:
    """World size, method:phase, trials and the slowest rank's p50/min/max in milliseconds."""
    header = ["ranks", "method:phase", "trials", "p50_ms", "min_ms", "max_ms"]
    lines = [
        [
            row["world_size"],
            row["pattern"],
            row["trials"],
            *(format_number(float(row[f"time_us_{s}"]) / 1e3, 4) for s in ("p50", "min", "max")),
        ]
        for row in rows
    ]
    time = "each trial the slowest rank's, in ms: p50, min, max over trials"
    numeric = ("p50_ms", "min_ms", "max_ms")
    return "\n".join([title_line("init", rows, time), *render_rows(header, lines, numeric=numeric)])
