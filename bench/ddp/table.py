"""The terminal table of `distbench ddp`, from results.csv rows (strings, as csv reads them): a
`# ddp ...` line naming the configuration, then a plain-text table (distbench.tables) per model and
world size. '-' marks a column that does not apply to the row (an empty cell)."""

from __future__ import annotations

from collections.abc import Sequence

from distbench.tables import BANDWIDTH_DIGITS, format_number, group_rows, render_rows

HEADER = (
    "strategy",
    "bucket_mb",
    "step_us",
    "samples/s",
    "scaling",
    "comm_MB",
    "busbw_GBps",
    "comm_share",
    "vs",
    "comm_hidden",
    "max_param_diff",
)
TEXT_COLUMNS = ("strategy", "vs")
"""Left-aligned; every other column holds a number."""


def row_cells(row: dict[str, str]) -> list[str]:
    """One results.csv row as the table's cells, in HEADER order."""
    mb = row["comm_bytes_per_step"]
    return [
        row["strategy"] + (f" K={row['avg_every']}" if row["avg_every"] else ""),
        row["bucket_mb"] or "-",
        format_number(row["step_time_us_mean"], ".1f"),
        format_number(row["samples_per_s"], ".1f"),
        format_number(row["scaling_efficiency"], ".3f"),
        format_number(int(mb) / 1e6 if mb else None, ".3f"),
        format_number(row["comm_busbw_GBps"], BANDWIDTH_DIGITS),
        format_number(row["comm_share"], ".3f"),
        row.get("comm_baseline") or "-",
        format_number(row["comm_hidden_share"], ".3f"),
        format_number(row["max_param_diff"], ".3g"),
    ]


def peak_megabytes(row: dict[str, str]) -> str | None:
    """The row's peak memory in MB (1e6 bytes) when it was measured (fsdp's column, v3), else
    None: rows of older runs and tests have no such column."""
    peak = row.get("peak_mem_bytes", "")
    return None if peak in ("", "nan") else format_number(float(peak) / 1e6, ".1f")


def render_ddp_table(rows: Sequence[dict[str, str]]) -> str:
    """One table per (model, world size) group of rows, in the order given; a `peak_MB` column
    (and its source in the header) where the rows measured their peak memory."""
    groups = group_rows(rows, ("model", "params", "backend", "device", "world_size"))
    blocks = []
    for (model, params, backend, device, world_size, env), group in groups.items():
        first = group[0]
        header = (
            f"# ddp  model={model} params={int(params)}  batch={first['batch_size']}/rank  "
            f"backend={backend}  device={device}  world_size={world_size}  "
            f"timer={first['timer']}  step=mean of the slowest rank's windows of "
            f"{first['window_steps']} step{'s' * (first['window_steps'] != '1')}  "
            "comm_MB, busbw_GBps, comm_share: against the row's own step without communication "
            "(vs: its comm_baseline)"
        )
        header += f"\n# env: {env}" if env else ""
        cells = [row_cells(row) for row in group]
        names: tuple[str, ...] = HEADER
        peaks = [peak_megabytes(row) for row in group]
        if any(peaks):
            names = (*HEADER, "peak_MB")
            cells = [[*c, p or "-"] for c, p in zip(cells, peaks, strict=True)]
            header += f"  peak memory={first.get('mem_source') or 'unlabelled'} above the baseline"
        numeric = [name for name in names if name not in TEXT_COLUMNS]
        lines = render_rows(names, cells, numeric) + hidden_notes(group)
        blocks.append("\n".join([header, *lines]))
    return "\n\n".join(blocks)


def hidden_notes(group: Sequence[dict[str, str]]) -> list[str]:
    """A `#` line under a table whose comm_hidden leaves [0, 1]: it is a share, unclamped, and a
    new user read -1.710 as a bug (collectors/schema.py DdpRow.comm_hidden_share)."""
    shares = [float(row["comm_hidden_share"]) for row in group if row["comm_hidden_share"]]
    lines = []
    if any(share < 0 for share in shares):
        lines.append(
            "# comm_hidden below 0: the overlapped step was slower than ddp-nooverlap's, so "
            "overlapping cost more than it hid (compute and communication contend for the same "
            "cores, as gloo on a CPU does; or noise)"
        )
    if any(share > 1 for share in shares):
        lines.append("# comm_hidden above 1: the step was faster than ddp-nocomm's (noise)")
    return lines
