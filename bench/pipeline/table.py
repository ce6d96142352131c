"""`distbench pipeline`'s terminal table (torch-free): one line per row as it lands."""

from __future__ import annotations

from collections.abc import Sequence

from distbench.tables import format_number, render_rows


def render_pipeline_table(rows: Sequence[dict[str, str]]) -> str:
    """Strategy, stages, microbatches, mean step time, samples/s, bubble next to theory."""
    header = ["strategy", "n", "M", "step_us_mean", "samples/s", "bubble", "theory", "param_diff"]
    lines = [
        [
            row["strategy"],
            row["world_size"],
            row["microbatches"],
            format_number(row["step_time_us_mean"], 4),
            format_number(row["samples_per_s"], 4),
            f"{float(row['bubble']):.3f}",
            f"{float(row['bubble_theory']):.3f}",
            f"{float(row['max_param_diff']):.2g}" if row["max_param_diff"] else "",
        ]
        for row in rows
    ]
    numeric = ("step_us_mean", "samples/s", "bubble", "theory", "param_diff")
    return "\n".join(render_rows(header, lines, numeric=numeric))
