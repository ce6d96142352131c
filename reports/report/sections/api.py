"""The report's "Collective APIs" section (--api, #15 §2): per size, what issuing a collective
through torch's functional collectives or a torch.compile'd function costs next to c10d, and
what compiling took.

A row of api A is set beside the c10d row of the same case (every COMM_MATCH_KEY column but api);
where the loaded runs hold several rows of one case and api (several sources or repeats), the
median of their p50s stands for it, and the table says how many rows it took.
"""

from __future__ import annotations

import pandas as pd

from distbench.collectors.schema import COMM_MATCH_KEY
from distbench.reports.render import Section, TableOut, format_number, size_cells

KEY = [c for c in COMM_MATCH_KEY if c != "api"]


def api_overhead(lines: pd.DataFrame) -> pd.DataFrame:
    """One row per (case, size, non-c10d api) that has a c10d row: both p50s and their ratio."""
    if "api" not in lines or not len(lines):
        return pd.DataFrame()
    asked = {"requested_bytes": ("requested_bytes", "first")} if "requested_bytes" in lines else {}
    median = lines.groupby([*KEY, "api"], dropna=False, as_index=False).agg(
        time_us_p50=("time_us_p50", "median"), rows=("time_us_p50", "size"), **asked
    )
    base = median[median["api"] == "c10d"].drop(columns=["api", *asked])
    other = median[median["api"] != "c10d"]
    paired = other.merge(base, on=KEY, suffixes=("", "_c10d"), how="inner")
    paired["overhead"] = paired["time_us_p50"] / paired["time_us_p50_c10d"]
    return paired.sort_values(["primitive", "world_size", "dtype", "mode", "api", "size_bytes"])


def section_api(lines: pd.DataFrame, notes: list[str]) -> list[Section]:
    """The section, when the runs hold any row issued through another api than c10d."""
    if "api" not in lines or set(lines["api"]) <= {"c10d"}:
        return []
    paired = api_overhead(lines)
    tables = []
    if len(paired):
        shown = pd.DataFrame(
            {
                "primitive": paired["primitive"],
                "n": paired["world_size"].astype(str),
                "dtype": paired["dtype"],
                "mode": paired["mode"],
                "api": paired["api"],
                "size": size_cells(paired),
                "c10d p50 (µs)": paired["time_us_p50_c10d"].map(format_number),
                "api p50 (µs)": paired["time_us_p50"].map(format_number),
                "api / c10d": paired["overhead"].map(lambda v: format_number(v, 3)),
            }
        )
        tables.append(
            TableOut(
                "Time per op through each api, next to c10d",
                shown,
                note="api / c10d above 1: the api costs that factor of c10d's time at this "
                "size (p50 of the slowest rank; medians where several rows measured one case).",
                numeric=("c10d p50 (µs)", "api p50 (µs)", "api / c10d"),
            )
        )
    else:
        notes.append(
            "Collective APIs: no c10d row of the same case to compare the functional or compiled "
            "rows with; run the same command with --api c10d and report both runs together."
        )
    compiled = lines[lines["api"].str.startswith("compiled")]
    if len(compiled) and "compile_s" in compiled:
        frame = compiled[["primitive", "world_size", "api", "compile_s"]].assign(
            size=size_cells(compiled)
        )
        tables.append(
            TableOut(
                "Compile time (outside every timed region)",
                pd.DataFrame(
                    {
                        "primitive": frame["primitive"],
                        "n": frame["world_size"].astype(str),
                        "api": frame["api"],
                        "size": frame["size"],
                        "compile (s)": frame["compile_s"].map(lambda v: format_number(v, 3)),
                    }
                ),
                note="The compiled function's first call on rank 0: compilation plus one run of "
                "the collective; one graph per size (dynamic=False).",
                numeric=("compile (s)",),
                collapsed=len(frame) > 20,
            )
        )
    text = (
        "c10d: torch.distributed's collectives. functional: torch.distributed."
        "_functional_collectives eagerly (out of place) plus wait_tensor. compiled:BACKEND: a "
        "torch.compile'd function of the functional collective (docs/apis.md)."
    )
    return [Section("Collective APIs", text, tables=tables)]
