"""`distbench overlap`'s terminal table (torch-free): one line per case as it lands."""

from __future__ import annotations

from collections.abc import Sequence

from distbench.parse import format_size
from distbench.tables import format_number, render_rows, title_line


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
    title = title_line("overlap", rows, "each phase's p50 of max over ranks")
    return "\n".join([title, *render_rows(header, lines, numeric=numeric), *notes(rows)])


def notes(rows: Sequence[dict[str, str]]) -> list[str]:
    """Lines under the table for what its numbers cannot mean as they stand: an efficiency above
    1 (both at once faster than the longer alone, which no overlap gives) is the three phases'
    noise, and a compute phase far from the collective's time leaves little to hide. (Below 0 is
    a finding: together slower than one after the other, as gloo's threads and the matmul
    compete for a small box's cores.)"""
    out = []
    wild = [r for r in rows if float(r["overlap_efficiency"] or "nan") > 1]
    if wild:
        out.append(
            f"# ! {len(wild)} of {len(rows)} rows have an efficiency above 1 (both at once faster "
            "than the longer alone): the phases' p50s are noise here; add --trials and --iters"
        )
    ratios = [float(r["t_compute_us"] or "nan") / float(r["t_comm_us"] or "nan") for r in rows]
    uneven = [ratio for ratio in ratios if ratio > 0 and not 0.5 <= ratio <= 2]
    if uneven:
        out.append(
            f"# {len(uneven)} of {len(rows)} rows time compute and the collective more than 2x "
            "apart: the shorter bounds what can be hidden (--compute-iters 0 matches them; more "
            "--iters steadies it)"
        )
    return out
