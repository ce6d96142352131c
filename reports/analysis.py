"""From loaded rows to what a report shows: comparison sources, the frames behind each figure, and
the key tables (summary, model fit, runs compared, DDP, send/recv pairs). pandas only.

A *source* is what runs are compared by: the label when the runs carry different labels, else the
host when they ran on different hosts, else the run itself. The first source (in the order the run
directories were given) is the baseline of every comparison."""

from __future__ import annotations

import numpy as np
import pandas as pd

from distbench.collectors.schema import (
    COMM_CASE_COLUMNS,
    DDP_CONFIG_COLUMNS,
    DDP_MATCH_KEY,
)
from distbench.parse import UsageError, format_size
from distbench.reports.fit import fit_groups
from distbench.reports.load import Loaded
from distbench.reports.pairs import is_pair_row

# Every grouping below is one of these keys, derived from the schema's match keys (compare's too):
# rows that differ in any of them (gloo on CPU and on CUDA, one node and two) never merge.
CASE = ["source", *COMM_CASE_COLUMNS]
"""A line of the report's tables: a source's measurements of one case over sizes."""
SCALING_LINE = [c for c in CASE if c not in ("world_size", "nnodes")]
"""A line of the scaling figure: a case without its x axis (world size) and the node count,
which grows with the world size in a several-node launch (where it does not follow from the world
size, the line is split by it)."""
DDP_CONFIG = ["source", *DDP_CONFIG_COLUMNS]
"""What the strategies of one compute/communication split share: DDP_MATCH_KEY less strategy."""
SERIES_LABELS = {
    "device": "{}",
    "nnodes": "{} node(s)",
    "dtype": "{}",
    "op": "op={}",
    "root": "root={}",
    "src": "src={}",
    "dst": "dst={}",
}
"""How a case column shows in a line's name when it tells lines apart."""


def assign_sources(loaded: Loaded, by: str = "auto") -> str:
    """Add a `source` column to comm and ddp rows; return what it was taken from."""
    frames = [f for f in (loaded.comm, loaded.ddp) if len(f)]
    both = pd.concat([f[["label", "host", "run", "argument"]] for f in frames], ignore_index=True)
    if by == "auto":
        by = next((c for c in ("label", "host") if both[c].nunique() > 1), "run")
    for frame in (loaded.comm, loaded.ddp):
        if by == "run" or not len(frame):
            frame["source"] = frame["run"]
        else:
            frame["source"] = frame[by].where(frame[by] != "", "(none)")
    order = (
        both.assign(source=both["run"] if by == "run" else both[by].where(both[by] != "", "(none)"))
        .sort_values("argument", kind="stable")["source"]
        .drop_duplicates()
        .tolist()
    )
    for frame in (loaded.comm, loaded.ddp):
        frame["source"] = pd.Categorical(frame["source"], categories=order, ordered=True)
    return by


def describe(frame: pd.DataFrame, ddp: pd.DataFrame) -> str:
    """'all_reduce at 2,3 ranks; ddp at 1,2 ranks': what one argument's runs measured."""
    parts = []
    for primitive, group in frame.groupby("primitive"):
        ranks = ",".join(str(w) for w in sorted(group["world_size"].unique()))
        parts.append(f"{primitive} at {ranks} ranks")
    if len(ddp):
        ranks = ",".join(str(w) for w in sorted(ddp["world_size"].unique()))
        parts.append(f"ddp at {ranks} ranks")
    return "; ".join(parts) or "nothing"


def check_common(loaded: Loaded, paths: list[str]) -> None:
    """Several arguments are a comparison: refuse them when no case (a primitive, backend, world
    size, dtype, mode ... or a DDP configuration) is in two of them."""
    if len(paths) < 2:
        return
    owners: dict[tuple[object, ...], set[int]] = {}
    # Sizes are left out: two ladders that never meet still overlay in the figures (the
    # comparison then says no size matched).
    for frame, key in ((loaded.comm, list(COMM_CASE_COLUMNS)), (loaded.ddp, list(DDP_MATCH_KEY))):
        if not len(frame):
            continue
        kind = "ddp" if frame is loaded.ddp else "comm"
        for argument, keys in frame.groupby("argument")[key]:
            for row in keys.drop_duplicates().itertuples(index=False):
                owners.setdefault((kind, *row), set()).add(int(str(argument)))
    if any(len(arguments) > 1 for arguments in owners.values()):
        return
    said = "; ".join(
        f"{path} measured "
        + describe(
            loaded.comm[loaded.comm["argument"] == i], loaded.ddp[loaded.ddp["argument"] == i]
        )
        for i, path in enumerate(paths)
    )
    raise UsageError(
        f"the runs have nothing in common to compare ({said}): give runs of the same primitive, "
        "world size and sizes, or report each on its own"
    )


def case_label(rows: pd.DataFrame, columns: list[str]) -> pd.Series:
    """' cpu 2 node(s) op=max ...': the SERIES_LABELS columns among `columns` that vary."""
    label = pd.Series("", index=rows.index)
    for column in (c for c in SERIES_LABELS if c in columns and c in rows.columns):
        if rows[column].nunique(dropna=False) > 1:
            text = rows[column].astype(str).map(SERIES_LABELS[column].format)
            label = label + " " + text
    return label


def series_names(rows: pd.DataFrame, with_source: bool) -> pd.Series:
    """'gloo n=2', plus the pattern and every other case column that tells lines apart, so a
    figure panel (primitive x mode) has one line per CASE."""
    names = rows["backend"] + " n=" + rows["world_size"].astype(str)
    names = names + rows["pattern"].where(rows["pattern"] == "", " " + rows["pattern"])
    names = names + case_label(rows, CASE)
    if with_source:
        names = rows["source"].astype(str) + " · " + names
    return names


def sample_points(rows: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """One point per max-over-ranks sample (time_us, busbw_GBps); the p50 where none were kept."""
    columns = ["run", "measurement", "primitive", "mode", "series", "size_bytes", "busbw_factor"]
    columns.append("world_size")
    base = rows[[*columns, "time_us_p50"]]
    points = base.merge(samples[["run", "measurement", "time_us"]], how="left", on=columns[:2])
    points["time_us"] = points["time_us"].fillna(points["time_us_p50"])
    points = points[points["time_us"] > 0].copy()
    busbw = points["size_bytes"] / points["time_us"] / 1e3 * points["busbw_factor"]
    points["busbw_GBps"] = busbw.where(points["world_size"] > 1)  # one rank: nothing moves
    return points


def pick_sizes(sizes: list[int], most: int) -> list[int]:
    """At most `most` sizes spread evenly over the sorted list, always the smallest and largest."""
    sizes = sorted(set(sizes))
    if len(sizes) <= most:
        return sizes
    picks = np.linspace(0, len(sizes) - 1, most).round().astype(int)
    return [sizes[i] for i in sorted(set(picks))]


def scaling_rows(lines: pd.DataFrame, most_sizes: int) -> pd.DataFrame:
    """Rows for the scaling figure: one mode (throughput if measured) and dtype, the primitives
    (with their pattern) measured at two or more world sizes, at most `most_sizes` sizes each.

    Sizes are the requested ones: gather-type sizes round down differently at each world size
    (1024 bytes asked, 1020 measured at 3 ranks), and a line must join the same request.
    """
    if lines.empty:
        return lines
    mode = "throughput" if (lines["mode"] == "throughput").any() else str(lines["mode"].iloc[0])
    dtype = str(lines["dtype"].mode().iloc[0])
    rows = lines[(lines["mode"] == mode) & (lines["dtype"] == dtype) & ~is_pair_row(lines)]
    pattern = rows["pattern"].where(rows["pattern"] == "", " " + rows["pattern"])
    rows = rows.assign(panel=rows["primitive"] + pattern)
    line = rows["source"].astype(str) + " · " + rows["backend"] + case_label(rows, SCALING_LINE)
    if rows.groupby([line, rows["world_size"]])["nnodes"].nunique().max() > 1:
        line = line + " " + rows["nnodes"].astype(str) + " node(s)"  # not set by world size
    rows = rows.assign(line=line)
    rows = rows[rows.groupby("panel")["world_size"].transform("nunique") >= 2]
    if rows.empty:
        return rows
    pieces = []
    for _panel, group in rows.groupby("panel"):
        sizes = pick_sizes(group["requested_bytes"].tolist(), most_sizes)
        pieces.append(group[group["requested_bytes"].isin(sizes)])
    # A point: one line (SCALING_LINE) at one world size and requested size.
    key = [*SCALING_LINE, "nnodes", "panel", "line", "world_size", "requested_bytes"]
    rows = (
        pd.concat(pieces)
        .groupby(key, observed=True, dropna=False)[["time_us_p50", "busbw_GBps"]]
        .median()
        .reset_index()
        .sort_values(["requested_bytes", "world_size"])
    )
    rows["size"] = rows["requested_bytes"].map(format_size)
    rows["source"] = rows["source"].astype(str)
    return rows


def ddp_lines(ddp: pd.DataFrame) -> pd.Series:
    """'cluster-a', plus the DDP_CONFIG columns (world size aside) that tell sources apart."""
    config = [c for c in DDP_CONFIG if c not in ("source", "world_size", "nnodes")]
    varying = [c for c in config if ddp[c].nunique(dropna=False) > 1]
    label = ddp["source"].astype(str)
    for column in varying:
        label = label + f" {column}=" + ddp[column].astype(str)
    return label


def ddp_split(ddp: pd.DataFrame) -> pd.DataFrame:
    """Per configuration (DDP_CONFIG, world size > 1) x strategy: compute = ddp-nocomm's mean
    step, comm = the rest (ms). Means: a periodic strategy's p50 is a step that sends nothing."""
    rows = ddp[ddp["world_size"] > 1]
    rows = rows.assign(panel=ddp_lines(rows) + " · " + rows["world_size"].astype(str) + " ranks")
    config = [*DDP_CONFIG, "panel"]
    mean = "step_time_us_mean"
    baseline = rows[rows["strategy"] == "ddp-nocomm"].groupby(config, observed=True, dropna=False)
    nocomm = baseline[mean].median().rename("compute_us").reset_index()
    if nocomm.empty:
        return pd.DataFrame()
    step = rows.groupby([*config, "strategy"], observed=True, dropna=False)[mean].median()
    split = step.reset_index().merge(nocomm, on=config)
    split["compute_ms"] = split["compute_us"] / 1e3
    split["comm_ms"] = (split[mean] - split["compute_us"]).clip(lower=0) / 1e3
    split["source"] = split["source"].astype(str)
    return split.sort_values(["panel", "strategy"]).reset_index(drop=True)


def summary_table(lines: pd.DataFrame) -> pd.DataFrame:
    """Key results per source x case: the smallest size's p50 and the largest size's busbw."""
    records = []
    for key, group in lines.groupby(CASE, observed=True, sort=True):
        by_size = group.groupby("size_bytes")[["time_us_p50", "busbw_GBps"]].median()
        small, large = by_size.index.min(), by_size.index.max()
        records.append(
            {
                **dict(zip(CASE, key, strict=True)),
                "sizes": len(by_size),
                "small": format_size(int(small)),
                "small_p50_us": float(by_size.loc[small, "time_us_p50"]),
                "large": format_size(int(large)),
                "large_p50_us": float(by_size.loc[large, "time_us_p50"]),
                "large_busbw_GBps": float(by_size.loc[large, "busbw_GBps"]),
                "peak_busbw_GBps": float(by_size["busbw_GBps"].max()),
            }
        )
    return pd.DataFrame.from_records(records)


def fit_table(lines: pd.DataFrame) -> pd.DataFrame:
    """The latency-bandwidth fit per source x case (see fit.py), with its line's `series`."""
    rows = lines.assign(source=lines["source"].astype(str))
    return fit_groups(rows, [*CASE, "series"] if "series" in rows.columns else CASE)
