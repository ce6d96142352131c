"""`distbench pipeline`'s terminal table (torch-free): one line per row as it lands."""

from __future__ import annotations

from collections.abc import Sequence

from distbench.tables import format_number, group_rows, render_rows

HEADER = ["strategy", "n", "M", "step_us_mean", "samples/s", "bubble", "theory", "param_diff"]


def render_pipeline_table(rows: Sequence[dict[str, str]]) -> str:
    """One table per (model, backend, device) group of rows, under a `# pipeline ...` line that
    says how they were measured, as the other commands' tables do: strategy, stages,
    microbatches, mean step time, samples/s, bubble next to theory."""
    blocks = []
    for (model, backend, device, env), group in group_rows(
        rows, ("model", "backend", "device")
    ).items():
        first = group[0]
        steps = first.get("window_steps", "1")
        header = (
            f"# pipeline  model={model}  batch={first['batch_size']}  backend={backend}  "
            f"device={device}  timer={first['timer']}  step=mean of the slowest rank's windows "
            f"of {steps} step{'s' * (steps != '1')}  bubble=mean idle share of a stage, "
            "theory=GPipe's (n-1)/(M+n-1)"
        )
        header += f"\n# env: {env}" if env else ""
        blocks.append("\n".join([header, *table_lines(group)]))
    return "\n\n".join(blocks)


def table_lines(rows: Sequence[dict[str, str]]) -> list[str]:
    """The lines of one group's table."""
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
    return render_rows(HEADER, lines, numeric=numeric)
