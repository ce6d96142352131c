"""From loaded rows to what a report shows: comparison sources, the frames behind each figure, and
the key tables (summary, model fit, runs compared, DDP, send/recv pairs). pandas only.

A *source* is what runs are compared by (reports/report/sources.py: the argument, label, host or
run). The first source (in the order the run directories were given) is the baseline of every
comparison."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from distbench.collectors.schema import (
    COMM_CASE_COLUMNS,
    DDP_CONFIG_COLUMNS,
)
from distbench.parse import format_asked_size, format_size
from distbench.reports.report.fit import fit_groups
from distbench.reports.report.pairs import is_pair_row
from distbench.reports.report.sources import (
    assign_sources as assign_sources,  # its callers' old home
)
from distbench.tables import natural_key

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
    "placement": "placement={}",
    "graph": "graph={}",
    "buffers": "{} buffers",
    "env": "{}",
}
"""How a case column shows in a line's name when it tells lines apart."""


def case_label(rows: pd.DataFrame, columns: list[str]) -> pd.Series:
    """' cpu 2 node(s) op=max ...': the SERIES_LABELS columns among `columns` that tell lines of
    one primitive apart (a broadcast's empty op names nothing, nor does an all_reduce's root)."""
    label = pd.Series("", index=rows.index)
    for column in (c for c in SERIES_LABELS if c in columns and c in rows.columns):
        values = rows[column].astype(str).where(rows[column].notna(), "")
        varies = values.groupby(rows["primitive"]).transform("nunique") > 1
        text = " " + values.map(SERIES_LABELS[column].format)
        label = label + text.where(varies & (values != ""), "")
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


def scaling_panel(rows: pd.DataFrame) -> pd.Series:
    """'all_reduce · throughput', 'send_recv ring · latency': a row of the scaling figure."""
    pattern = rows["pattern"].where(rows["pattern"] == "", " " + rows["pattern"])
    return rows["primitive"] + pattern + " · " + rows["mode"]


def scaling_rows(lines: pd.DataFrame, most_sizes: int) -> pd.DataFrame:
    """Rows for the scaling figure: a panel per primitive (with its pattern) and mode measured at
    two or more world sizes; a line per source, dtype and any other case column that differs; at
    most `most_sizes` sizes per panel (shown.left_out names the others).

    Sizes are the requested ones: gather-type sizes round down differently at each world size
    (1024 bytes asked, 1020 measured at 3 ranks), and a line must join the same request.
    """
    if lines.empty:
        return lines
    rows = lines[~is_pair_row(lines)]
    rows = rows.assign(panel=scaling_panel(rows))
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


COMM_BASELINE = "comm_baseline"
"""The row's column naming its own no-communication baseline strategy (bench/ddp/spec.py
COMM_BASELINE: ddp-nocomm for DDP's strategies, local for the manual and FSDP ones)."""
OLD_COMM_BASELINE = "ddp-nocomm"
"""Where a row names none (a frame without the column; dp's empty cell): v3's baseline, which
the migration also gives every row of an older run (collectors/migrations.py)."""


def comm_baselines(ddp: pd.DataFrame) -> pd.Series:
    """Each row's comm_baseline, ddp-nocomm where the frame or the row has none."""
    if COMM_BASELINE not in ddp:
        return pd.Series(OLD_COMM_BASELINE, index=ddp.index, dtype=object)
    names = ddp[COMM_BASELINE].astype(object).fillna("").astype(str)
    return names.where(names != "", OLD_COMM_BASELINE)


def ddp_split(ddp: pd.DataFrame) -> pd.DataFrame:
    """Per configuration (DDP_CONFIG, world size > 1) x strategy: compute = the mean step of the
    row's own no-communication baseline (its comm_baseline: ddp-nocomm for DDP's strategies, local
    for grad-avg, param-avg and FSDP), comm = the rest (ms), as the row's comm_share subtracts it.
    A strategy whose baseline was not run at that configuration has no bar. Means: a periodic
    strategy's p50 is a step that sends nothing."""
    rows = ddp[ddp["world_size"] > 1]
    rows = rows.assign(
        panel=ddp_lines(rows) + " · " + rows["world_size"].astype(str) + " ranks",
        comm_baseline=comm_baselines(rows),
        bar=strategy_variants(rows),
    )
    config = [*DDP_CONFIG, "panel"]
    mean = "step_time_us_mean"
    by_strategy = rows.groupby([*config, "strategy"], observed=True, dropna=False)[mean].median()
    compute = by_strategy.rename("compute_us").reset_index()
    compute = compute.rename(columns={"strategy": COMM_BASELINE})
    keys = [*config, "bar", "strategy", COMM_BASELINE]
    step = rows.groupby(keys, observed=True, dropna=False)[mean]
    split = step.median().reset_index().merge(compute, on=[*config, COMM_BASELINE])
    if split.empty:
        return pd.DataFrame()
    split["compute_ms"] = split["compute_us"] / 1e3
    split["comm_ms"] = (split[mean] - split["compute_us"]).clip(lower=0) / 1e3
    split["source"] = split["source"].astype(str)
    split["strategy"] = split["bar"]  # one bar per setting: ddp bucket_mb=1, ... bucket_mb=25
    split = split.drop(columns="bar")
    return split.sort_values(["panel", "strategy"], key=natural).reset_index(drop=True)


def natural(values: pd.Series) -> pd.Series:
    """A sort key that reads the numbers in a label as numbers: bucket_mb=5 before =25."""
    return values.astype(str).map(natural_key)


def missing_baselines(ddp: pd.DataFrame) -> list[str]:
    """The strategies the split cannot draw, and why: their comm_baseline was not run beside them
    (grad-avg without `local`), one line per strategy and missing baseline."""
    rows = ddp[ddp["world_size"] > 1]
    if rows.empty:
        return []
    rows = rows.assign(comm_baseline=comm_baselines(rows))
    ran = set(rows["strategy"].astype(str))
    lacking = rows[~rows[COMM_BASELINE].isin(ran)]
    named = zip(lacking["strategy"].astype(str), lacking[COMM_BASELINE].astype(str), strict=True)
    pairs = sorted(set(named))
    return [
        f"DDP strategies split: {strategy} has no bar: its comm_baseline, {baseline}, did not run "
        f"beside it (add {baseline} to --strategies); its comm_share and comm_busbw are empty too"
        for strategy, baseline in pairs
    ]


VARIANT_COLUMNS = ("bucket_mb", "gradient_as_bucket_view", "static_graph", "avg_every")
"""A strategy's own settings (DDP_STRATEGY_COLUMNS less strategy): rows of one strategy that
differ in one are different bars and lines (a --bucket-mb 1,5,25 sweep is three)."""


def strategy_variants(ddp: pd.DataFrame) -> pd.Series:
    """Each row's strategy, with the settings its strategy's rows differ in: 'ddp bucket_mb=5'
    where the run swept --bucket-mb, plain 'grad-avg' where nothing varied."""
    label = ddp["strategy"].astype(str)
    for column in VARIANT_COLUMNS:
        if column not in ddp:
            continue
        values = ddp[column].astype(str)
        varies = values.groupby(ddp["strategy"], observed=True).transform("nunique") > 1
        label = label.where(~varies, label + f" {column}=" + values)
    return label


def summary_table(lines: pd.DataFrame) -> pd.DataFrame:
    """Key results per source x case: the smallest size's p50 and the largest size's busbw, each
    size as asked for (parse.format_asked_size). One groupby for every case and size (a groupby
    per case cost ~1.5 s at 10,000 rows)."""
    grouped = lines.groupby([*CASE, "size_bytes"], observed=True, sort=True)
    medians = grouped[["time_us_p50", "busbw_GBps"]].median()
    if medians.empty:
        return pd.DataFrame()
    has_asked = "requested_bytes" in lines  # the size's label (an older run may have none)
    medians["requested_bytes"] = grouped["requested_bytes"].first() if has_asked else None
    by_case = medians.reset_index("size_bytes").groupby(level=CASE, observed=True, sort=True)
    small, large = by_case.head(1), by_case.tail(1)
    sizes, peaks = by_case.size(), by_case["busbw_GBps"].max()
    small_size = map(format_asked_size, small["size_bytes"], small["requested_bytes"])
    large_size = map(format_asked_size, large["size_bytes"], large["requested_bytes"])
    ends = zip(
        sizes.index, sizes.tolist(), small_size, small["time_us_p50"].tolist(),
        large_size, large["time_us_p50"].tolist(),
        large["busbw_GBps"].tolist(), peaks.tolist(), strict=True,
    )  # fmt: skip
    records = [
        {
            **dict(zip(CASE, key, strict=True)),
            "sizes": count,
            "small": small_size,
            "small_p50_us": float(small_p50),
            "large": large_size,
            "large_p50_us": float(large_p50),
            "large_busbw_GBps": float(large_busbw),
            "peak_busbw_GBps": float(peak),
        }
        for key, count, small_size, small_p50, large_size, large_p50, large_busbw, peak in ends
    ]
    return pd.DataFrame.from_records(records)


def fit_table(lines: pd.DataFrame) -> pd.DataFrame:
    """The latency-bandwidth fit per source x case (see fit.py), with its line's `series`."""
    rows = lines.assign(source=lines["source"].astype(str))
    return fit_groups(rows, [*CASE, "series"] if "series" in rows.columns else CASE)


def series_arrays(frame: pd.DataFrame, columns: Iterable[str]) -> dict[str, dict[str, np.ndarray]]:
    """Each `series` of `frame`: its `columns` as arrays, sorted by world size as
    sort_values("world_size") sorts (quicksort). Slicing the frame per series cost ~1 s at
    10,000 rows (pandas slices every string column of every group)."""
    arrays = {c: frame[c].to_numpy() for c in columns}
    found = {}
    for name, positions in frame.groupby("series").indices.items():
        order = positions[np.argsort(arrays["world_size"][positions], kind="quicksort")]
        found[str(name)] = {c: values[order] for c, values in arrays.items()}
    return found
