"""The report's per-rank spread (runs made with --rank-samples node|all): for each measurement,
the slowest and the fastest rank by their own median sample, as nccl-tests -I shows each
process's time. The rows' statistics use the max over ranks (samples.csv, rank -1); this says
how far apart the ranks behind that max were, and which rank was the slow one."""

from __future__ import annotations

import pandas as pd

from distbench.collectors.rank_samples import read_rank_samples
from distbench.reports.load import Loaded
from distbench.reports.render import Section, TableOut, format_number, size_cells

MAX_SHOWN = 60
"""Table rows in the Markdown report (every row stays in the HTML)."""


def rank_spread(samples: pd.DataFrame) -> pd.DataFrame:
    """measurement -> slowest and fastest rank by median sample (per-rank p50), and the ratio.

    `samples`: per-rank rows (measurement, rank, time_us)."""
    medians = (
        samples.groupby(["measurement", "rank"], observed=True)["time_us"].median().reset_index()
    )
    order = medians.sort_values(["measurement", "time_us", "rank"], kind="stable")
    grouped = order.groupby("measurement", observed=True, sort=False)
    fastest, slowest = grouped.first(), grouped.last()
    out = pd.DataFrame(
        {
            "ranks": grouped.size(),
            "slowest_rank": slowest["rank"],
            "slowest_p50_us": slowest["time_us"],
            "fastest_rank": fastest["rank"],
            "fastest_p50_us": fastest["time_us"],
        }
    )
    out["spread"] = out["slowest_p50_us"] / out["fastest_p50_us"]
    out.index = out.index.astype(str)
    return out


def section_rank_spread(loaded: Loaded, notes: list[str]) -> list[Section]:
    """The section, or none when no run has per-rank samples."""
    tables = []
    for run in loaded.runs:
        samples = read_rank_samples(run.path, ("measurement", "rank", "time_us"))
        if samples is None or samples.empty or not len(run.rows):
            continue
        if run.kind != "comm":
            notes.append(f"{run.path}: per-rank samples of {run.kind} rows are kept, not shown")
            continue
        spread = rank_spread(samples)
        rows = run.rows.set_index(run.rows["measurement"].astype(str))
        sized = rows.assign(size=size_cells(rows))
        shown = spread.join(sized[["primitive", "mode", "size"]], how="inner")
        if shown.empty:
            continue
        table = pd.DataFrame(
            {
                "primitive": shown["primitive"],
                "mode": shown["mode"],
                "size": shown["size"],
                "ranks": shown["ranks"],
                "slowest rank": shown["slowest_rank"].astype(int).astype(str),
                "slowest p50 (µs)": shown["slowest_p50_us"].map(format_number),
                "fastest rank": shown["fastest_rank"].astype(int).astype(str),
                "fastest p50 (µs)": shown["fastest_p50_us"].map(format_number),
                "slowest / fastest": shown["spread"].map(lambda x: format_number(x, 3)),
            }
        )
        numeric = ("ranks", "slowest p50 (µs)", "fastest p50 (µs)", "slowest / fastest")
        long = len(table) > MAX_SHOWN
        tables.append(TableOut(run.name, table, numeric=numeric, markdown=not long))
    if not tables:
        return []
    text = (
        "Each measurement's slowest and fastest rank, each by the median of its own samples "
        "(the run's per-rank samples, --rank-samples). The rows above use the max over ranks "
        "per sample; a large slowest/fastest ratio names the rank that set it."
    )
    return [Section("Per-rank spread", text=text, tables=tables)]
