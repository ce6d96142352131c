"""The terminal table of `distbench ddp`, from results.csv rows (strings, as csv reads them)."""

from __future__ import annotations

from collections.abc import Sequence

from distbench.comm.table import format_bandwidth

COLUMNS = (
    ("strategy", 14),
    ("bucket_mb", 10),
    ("step_us", 12),
    ("samples/s", 12),
    ("scaling", 9),
    ("comm_MB", 9),
    ("busbw_GBps", 11),
    ("comm_share", 11),
    ("comm_hidden", 12),
    ("max_param_diff", 15),
)


def _number(text: str, fmt: str) -> str:
    """A CSV cell formatted, or '-' where the column does not apply (empty cell)."""
    if not text:
        return "-"
    try:
        return format(float(text), fmt)
    except ValueError:
        return text


def render_ddp_table(rows: Sequence[dict[str, str]]) -> str:
    """One table per (model, world size) group of rows, in the order given."""
    groups: dict[tuple[str, ...], list[dict[str, str]]] = {}
    for row in rows:
        key = (row["model"], row["params"], row["backend"], row["device"], row["world_size"])
        groups.setdefault(key, []).append(row)
    blocks = []
    for (model, params, backend, device, world_size), group in groups.items():
        first = group[0]
        header = (
            f"# ddp  model={model} params={int(params)}  batch={first['batch_size']}/rank  "
            f"backend={backend}  device={device}  world_size={world_size}  "
            f"timer={first['timer']}  step=mean of the slowest rank's windows of "
            f"{first['window_steps']} steps"
        )
        names = [name for name, _ in COLUMNS]
        widths = [width for _, width in COLUMNS]
        lines = [header, "#" + "".join(n.rjust(w) for n, w in zip(names, widths, strict=True))[1:]]
        for row in group:
            mb = row["comm_bytes_per_step"]
            cells = [
                row["strategy"] + (f" K={row['avg_every']}" if row["avg_every"] else ""),
                row["bucket_mb"] or "-",
                _number(row["step_time_us_mean"], ".1f"),
                _number(row["samples_per_s"], ".1f"),
                _number(row["scaling_efficiency"], ".3f"),
                _number(str(int(mb) / 1e6) if mb else "", ".3f"),
                format_bandwidth(row["comm_busbw_GBps"]),
                _number(row["comm_share"], ".3f"),
                _number(row["comm_hidden_share"], ".3f"),
                _number(row["max_param_diff"], ".3g"),
            ]
            lines.append("".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
