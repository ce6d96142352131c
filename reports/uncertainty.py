"""How sure a report's speedups are: a 95 % interval and a verdict for every compared row.

    judged = judge_speedups(ratios, samples, "comm")   # adds low, high, verdict, ...

Interval: a two-level bootstrap of the ratio of medians, resampling within each run's samples
(samples.csv, rank -1, the max over ranks): trials with replacement, then the iterations of each
drawn trial with replacement (throughput mode keeps one sample per trial; a DDP v2 sample is a
window and stands alone), the median of the pooled draw, REPLICATES times with a fixed seed, so a
report is reproducible. Trials of one launch share its placement and the box's load, so that
interval sees the noise within a launch only; two single launches differ by more (docs:
compare-and-ci.md, "Why this rule"). The other rows of the same pair of launches (LAUNCH: every
size, mode and primitive of one world size) show it: their log speedups scatter by more than
their bootstrap variances allow. That excess, the DerSimonian-Laird between-row variance tau^2
(over every compared row when a launch holds one), is added to each bootstrap replicate as a
normal draw: the interval is the 2.5-97.5 percentile of log(baseline median*) - log(median*) +
tau * z. Where a cluster's advantage genuinely differs between sizes or primitives, tau absorbs
that too and the intervals are wider than they need be: conservative, never overconfident. A
shift common to every row of a launch cannot be told from a cluster difference with one launch
per source; only a speedup that stands out of that scatter is called.

Verdict: `faster` or `slower` only when the interval excludes 1 *and* compare's rule, with its
defaults (5 % threshold, exact rank test on >= 5 independent units per side, Benjamini-Hochberg
across the rows, two adjacent sizes), calls the row regressed in that direction: `distbench
compare BASELINE OTHER` for slower, `distbench compare OTHER BASELINE` for faster. Otherwise
`indistinguishable`; `untested` when a side has fewer than 5 independent units (trials; DDP
windows; schema v1 DDP steps are not independent), where compare's rank test cannot vote either.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pandas as pd

from distbench.collectors.schema import COMM_MATCH_KEY, DDP_MATCH_KEY, SCHEMA_VERSION
from distbench.reports.checks import METRICS, Thresholds, parse_threshold
from distbench.reports.legacy_compare import judge
from distbench.reports.render import format_number
from distbench.reports.rule import REGRESSED, GateRule, decide
from distbench.reports.runs import DDP_WINDOWS_SINCE, Row

REPLICATES = 1000
"""Bootstrap replicates per row (the usual count for 95 % percentile intervals)."""
SEED = 18
"""The bootstrap's seed: the same runs give the same report."""
LEVEL = 0.95
Z = 1.959964
"""The normal quantile of a two-sided 95 % interval."""
CHUNK = 4_000_000
"""Drawn samples per bootstrap batch (bounds the memory: ~100 MB)."""
REPORT_RULE = GateRule(Thresholds(parse_threshold("5%")))
"""compare's default rule (its command-line defaults)."""
FASTER, SLOWER, SAME, UNTESTED = "faster", "slower", "indistinguishable", "untested"
LAUNCH = ["source", "run", "run_base", "backend", "world_size", "nnodes"]
"""The rows of one pair of launches (a run directory launches each world size once): every size,
mode, dtype and primitive measured there. A launch shifts them all, so their scatter beyond the
bootstrap is the measured part of the launch-to-launch spread."""


def sample_arrays(samples: pd.DataFrame, kind: str) -> dict[tuple[str, str], np.ndarray]:
    """(run, measurement) -> its samples as a trials x iterations array (NaN-padded); a DDP
    window is a trial of its own. Slices of one sorted array (no per-group DataFrames)."""
    frame = samples.sort_values(["run", "measurement", "trial", "iter"], kind="stable")
    runs = frame["run"].astype(str).to_numpy()
    measurements = frame["measurement"].astype(str).to_numpy()
    trials = frame["trial"].to_numpy()
    times = frame["time_us"].to_numpy(dtype=float)
    new_group = np.r_[True, (runs[1:] != runs[:-1]) | (measurements[1:] != measurements[:-1])]
    edges = np.r_[np.flatnonzero(new_group), len(times)]
    arrays: dict[tuple[str, str], np.ndarray] = {}
    for start, end in itertools.pairwise(edges.tolist()):
        values, trial = times[start:end], trials[start:end]
        starts = np.flatnonzero(np.r_[True, trial[1:] != trial[:-1]])
        if kind == "ddp" or len(starts) == len(values):  # one sample per trial (or window)
            grid = values[:, None]
        else:
            counts = np.diff(np.r_[starts, len(values)])
            grid = np.full((len(starts), int(counts.max())), np.nan)
            rows = np.repeat(np.arange(len(starts)), counts)
            grid[rows, np.arange(len(values)) - np.repeat(starts, counts)] = values
        arrays[(runs[start], measurements[start])] = grid
    return arrays


def units_of_array(grid: np.ndarray | None, kind: str, version: int) -> tuple[float, ...]:
    """compare's independent units (runs.units_of) from an array: a trial's median; a window."""
    if grid is None or (kind == "ddp" and version < DDP_WINDOWS_SINCE):
        return ()
    if grid.shape[1] == 1:
        return tuple(grid[:, 0].tolist())
    ragged = np.isnan(grid).any()
    return tuple((np.nanmedian(grid, axis=1) if ragged else np.median(grid, axis=1)).tolist())


def last_axis_median(values: np.ndarray) -> np.ndarray:
    """np.median over the last axis, by sorting: 6x faster than np.median's partition on the
    short axes (a row's trials) the bootstrap reduces millions of times; no NaN allowed."""
    ordered = np.sort(values, axis=-1)
    half = ordered.shape[-1] // 2
    if ordered.shape[-1] % 2:
        return ordered[..., half]
    return (ordered[..., half - 1] + ordered[..., half]) / 2


def bootstrap_log_medians(grids: list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """rows x REPLICATES log medians: trials drawn with replacement, then each drawn trial's
    iterations with replacement, rows of one shape at once."""
    out = np.full((len(grids), REPLICATES), np.nan)
    by_shape: dict[tuple[int, int], list[int]] = {}
    for i, grid in enumerate(grids):
        by_shape.setdefault(grid.shape, []).append(i)
    for (trials, iters), members in by_shape.items():
        step = max(1, CHUNK // (REPLICATES * trials * iters))
        for start in range(0, len(members), step):
            rows = members[start : start + step]
            values = np.stack([grids[i] for i in rows])  # rows x trials x iters
            counts = np.sum(~np.isnan(values), axis=2)  # rows x trials
            r = np.arange(len(rows))[:, None, None]
            drawn = rng.integers(0, trials, size=(len(rows), REPLICATES, trials))
            if iters == 1:  # one sample per trial: draw trials only
                out[rows] = np.log(last_axis_median(values[r, drawn, 0]))
                continue
            have = counts[r, drawn]  # rows x replicates x trials
            pick = (rng.random((*drawn.shape, iters)) * have[..., None]).astype(int)
            chosen = values[r[..., None], drawn[..., None], pick]
            chosen = np.where(np.arange(iters) < have[..., None], chosen, np.nan)
            flat = chosen.reshape(len(rows), REPLICATES, trials * iters)
            medians = np.nanmedian(flat, axis=2) if np.isnan(flat).any() else last_axis_median(flat)
            out[rows] = np.log(medians)
    return out


def between_rows_tau(y: np.ndarray, v: np.ndarray) -> float:
    """DerSimonian-Laird tau: the spread of log speedups beyond their bootstrap variances."""
    keep = np.isfinite(y) & np.isfinite(v)
    y, v = y[keep], np.maximum(v[keep], 1e-12)
    if len(y) < 2:
        return math.nan
    w = 1.0 / v
    mean = np.sum(w * y) / np.sum(w)
    q = float(np.sum(w * (y - mean) ** 2))
    scale = float(np.sum(w) - np.sum(w**2) / np.sum(w))
    return math.sqrt(max(0.0, (q - (len(y) - 1)) / scale)) if scale > 0 else 0.0


def launch_tau(frame: pd.DataFrame, group: list[str]) -> pd.Series:
    """Each row's tau: its launch's (LAUNCH), or every row's for a lone row."""
    everyone = between_rows_tau(frame["log_speedup"].to_numpy(), frame["log_var"].to_numpy())
    tau = pd.Series(everyone if math.isfinite(everyone) else 0.0, index=frame.index)
    columns = [c for c in group if c in frame.columns]
    for _key, rows in frame.groupby(columns, dropna=False, observed=True, sort=False):
        own = between_rows_tau(rows["log_speedup"].to_numpy(), rows["log_var"].to_numpy())
        if math.isfinite(own):
            tau[rows.index] = own
    return tau


def compare_row(record: dict[str, Any], side: str, kind: str) -> Row:
    """compare's Row for one side ('' current, '_base' baseline) of a matched report row."""
    key_columns = DDP_MATCH_KEY if kind == "ddp" else COMM_MATCH_KEY
    values = {c: str(int(record[c])) if c == "size_bytes" else str(record[c]) for c in key_columns}
    column = "step_time_us_p50" if kind == "ddp" else "time_us_p50"
    values[column] = repr(float(record[f"{column}{side}"]))
    version = int(record.get(f"schema_version{side}", SCHEMA_VERSION))
    key = (("kind", kind), *((c, values[c]) for c in key_columns))
    units = tuple(record[f"units{side}"])
    return Row(key, kind, values, units, "trial", version, str(record[f"run{side}"]))


def compare_calls(frame: pd.DataFrame, kind: str) -> tuple[list[bool], list[bool]]:
    """Per row: compare calls it regressed one way (slower), the other way (faster)."""
    slower, faster = [False] * len(frame), [False] * len(frame)
    metric = METRICS["time_us_p50"]
    positions: dict[object, list[int]] = {s: [] for s in frame["source"].unique()}
    records = [{str(k): v for k, v in r.items()} for r in frame.to_dict(orient="records")]
    for i, record in enumerate(records):
        positions[record["source"]].append(i)
    for members in positions.values():  # one comparison per source against the baseline
        pairs = [
            (compare_row(records[i], "_base", kind), compare_row(records[i], "", kind))
            for i in members
        ]
        forward = decide([judge(b, c, metric, REPORT_RULE) for b, c in pairs], REPORT_RULE)
        backward = decide([judge(c, b, metric, REPORT_RULE) for b, c in pairs], REPORT_RULE)
        for i, ahead, behind in zip(members, forward, backward, strict=True):
            slower[i] = ahead.verdict == REGRESSED
            faster[i] = behind.verdict == REGRESSED
    return slower, faster


def judge_speedups(ratios: pd.DataFrame, samples: pd.DataFrame, kind: str) -> pd.DataFrame:
    """`ratios` (analysis.comm_ratios or ddp_ratios: run, measurement, their _base twins,
    speedup) plus low, high, verdict, units and units_base (independent samples per side),
    log_var (the bootstrap variance of the log speedup) and tau (module docstring)."""
    if ratios.empty:
        return ratios.assign(low=[], high=[], verdict=[], tau=[], log_var=[])
    arrays = sample_arrays(samples, kind)
    frame = ratios.reset_index(drop=True).copy()
    grids = {}
    for side in ("", "_base"):
        found = [
            arrays.get((str(r), str(m)))
            for r, m in zip(frame[f"run{side}"], frame[f"measurement{side}"], strict=True)
        ]
        versions = frame.get(f"schema_version{side}", pd.Series(2, index=frame.index))
        frame[f"units{side}"] = [
            units_of_array(g, kind, int(v)) for g, v in zip(found, versions, strict=True)
        ]
        grids[side] = found
    fewest = np.minimum(frame["units"].map(len), frame["units_base"].map(len))
    tested = (fewest >= REPORT_RULE.min_samples).to_numpy()
    rng = np.random.default_rng(SEED)
    idx = np.flatnonzero(tested)
    replicates = np.full((len(frame), REPLICATES), np.nan)
    if len(idx):
        base = bootstrap_log_medians([grids["_base"][i] for i in idx], rng)  # type: ignore[misc]
        this = bootstrap_log_medians([grids[""][i] for i in idx], rng)  # type: ignore[misc]
        replicates[idx] = base - this
    frame["log_speedup"] = np.log(frame["speedup"].to_numpy(dtype=float))
    frame["log_var"] = np.where(
        tested, np.var(np.where(tested[:, None], replicates, 0.0), axis=1), np.nan
    )
    frame["tau"] = launch_tau(frame, LAUNCH)
    spread = replicates + frame["tau"].to_numpy()[:, None] * rng.standard_normal(replicates.shape)
    low, high = np.full(len(frame), np.nan), np.full(len(frame), np.nan)
    if len(idx):
        tails = np.percentile(spread[idx], [50 * (1 - LEVEL), 50 * (1 + LEVEL)], axis=1)
        low[idx], high[idx] = np.exp(tails[0]), np.exp(tails[1])
    frame["low"], frame["high"] = low, high
    slower, faster = compare_calls(frame, kind)
    verdict = np.where(tested, SAME, UNTESTED).astype(object)
    verdict[np.array(slower) & (high < 1)] = SLOWER
    verdict[np.array(faster) & (low > 1)] = FASTER
    frame["verdict"] = verdict
    return frame


def trials_to_resolve(frame: pd.DataFrame, change: float = 0.10) -> int | None:
    """Independent units per side that would make a row's interval (within a launch) resolve
    `change` with 80 % power: n * var scales as 1/n; None when nothing was tested."""
    tested = frame[np.isfinite(frame["log_var"])]
    if tested.empty:
        return None
    n = np.minimum(tested["units"].map(len), tested["units_base"].map(len)).to_numpy()
    per_unit = float(np.median(n * tested["log_var"].to_numpy()))
    return max(
        REPORT_RULE.min_samples, math.ceil(per_unit * ((Z + 0.8416) / math.log1p(change)) ** 2)
    )


def with_interval(values: pd.Series, low: pd.Series, high: pd.Series) -> pd.Series:
    """'1.23 [0.98, 1.51]': a number with its 95 % interval; the number alone without one."""
    text = [
        format_number(v, 3)
        + (f" [{format_number(a, 3)}, {format_number(b, 3)}]" if pd.notna(a) else "")
        for v, a, b in zip(values, low, high, strict=True)
    ]
    return pd.Series(text, index=values.index, dtype=object)
