"""`distbench pairs`' terminal tables (torch-free): the pairs of each size as they land, and after
the run every rank's (or node's) standing from ranks.csv with the outliers named."""

from __future__ import annotations

from collections.abc import Sequence

from distbench.parse import format_size
from distbench.tables import format_number, render_rows


def render_pairs_table(rows: Sequence[dict[str, str]]) -> str:
    """A `#` line saying what was measured and how (as the collectives' tables do), then one line
    per pair: the pair, its ranks, size, mode, p50 time and busbw. A pair measured again (an
    outlier's confirmation) reads `1-2 again`."""
    if not rows:
        return "no rows"
    first = rows[0]
    title = (
        f"# pairs {first.get('primitive', '')}  backend={first.get('backend', '')}  "
        f"device={first.get('device', '')}  world_size={first.get('world_size', '')}  "
        f"timer={first.get('timer', '')}  time=p50 of max over the pair's ranks"
    )
    header = ["pair", "ranks", "size", "mode", "env", "time_us_p50", "busbw_GBps"]
    seen: set[tuple[str, ...]] = set()
    names = []
    for row in rows:
        case = tuple(row.get(k, "") for k in ("src", "dst", "size_bytes", "mode", "env"))
        names.append(f"{row['src']}-{row['dst']}" + (" again" if case in seen else ""))
        seen.add(case)
    lines = [
        [
            name,
            row["ranks"],
            format_size(int(row["size_bytes"])),
            row["mode"],
            row.get("env", ""),
            format_number(row["time_us_p50"], 4),
            format_number(row["busbw_GBps"], 4),
        ]
        for name, row in zip(names, rows, strict=True)
    ]
    return "\n".join([title, *render_rows(header, lines, numeric=("time_us_p50", "busbw_GBps"))])


def render_standings(rows: Sequence[dict[str, str]]) -> str:
    """ranks.csv as a table, then one line naming the outliers (or saying there are none)."""
    if not rows:
        return "no ranks.csv rows: nothing was measured"
    level = rows[0]["level"]
    header = ["rank", "host", "node", "size", "mode", "env", "busbw_GBps", "robust_z", "outlier"]
    lines = [
        [
            row["rank"],
            row["host"],
            row["node"],
            format_size(int(row["size_bytes"])),
            row["mode"],
            row["env"],
            format_number(row["busbw_GBps"], 4),
            f"{float(row['robust_z']) + 0.0:.1f}",  # + 0.0: -0.0 reads 0.0
            "OUTLIER" if row["outlier"] == "true" else "",
        ]
        for row in rows
    ]
    table = render_rows(header, lines, numeric=("busbw_GBps", "robust_z"))
    column = "rank" if level == "rank" else "node"
    flagged = sorted({row[column] for row in rows if row["outlier"] == "true"}, key=int)
    verdict = f"outliers ({level}s): {', '.join(flagged) if flagged else 'none'}"
    if len({row[column] for row in rows}) == 2:
        verdict += (
            f" (2 {level}s make one pair: which end of a slow pair is slow cannot be told; "
            "3 or more can)"
        )
    return "\n".join([*table, verdict])
