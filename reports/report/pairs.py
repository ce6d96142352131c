"""Pair rows as matrices: `sendrecv --pairs all` (every ordered pair) and `distbench pairs` (every
unordered pair of ranks or nodes, send/recv both ways at once or an all_reduce on the pair), with
each rank's standing from the run's ranks.csv (`distbench pairs` only; older runs have none).

A matrix is one case of the schema's key (COMM_CASE_COLUMNS) with src and dst left free, so two
backends, devices or --env combinations never share one. A `distbench pairs` row measured both
directions of its pair at once, so its matrix is symmetric: both halves are filled from it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields

import pandas as pd

from distbench.collectors.ranks import RankRow
from distbench.collectors.schema import COMM_CASE_COLUMNS, RANKS_CSV
from distbench.parse import format_size
from distbench.reports.cells import convert_numeric, read_csv_strings
from distbench.reports.kinds import numeric_columns
from distbench.reports.load import RunData

MATRIX_CASE = [c for c in COMM_CASE_COLUMNS if c not in ("src", "dst")]
"""What one matrix holds fixed: the case columns except its two axes."""
MAX_MATRICES = 9
TITLED = ("backend", "device", "nnodes", "op", "env")
"""Case columns named in a matrix's title when the matrices differ in them."""
PAIRS_COMMAND = r"(node-)?pairs(:.*)?"
"""The pattern of `distbench pairs` rows: `pairs:bidir-window=8`, `node-pairs` (all_reduce) ..."""
RANK_COLUMNS = tuple(f.name for f in fields(RankRow))
RANK_COLUMNS_BEFORE_FIRST_Z = tuple(c for c in RANK_COLUMNS if c != "first_z")
"""What every ranks.csv holds: first_z came with the confirmation of outliers (v4)."""


@dataclass(frozen=True)
class PairMatrix:
    """One matrix of the report: busbw (GB/s) of each pair, at the case's largest size."""

    title: str
    primitive: str
    matrix: pd.DataFrame
    """src unit (index) x dst unit (columns), labels as strings; NaN: not measured."""
    axis: str
    """rank or node: what a unit is."""
    symmetric: bool
    """A `distbench pairs` matrix: each pair measured once, both directions, both halves."""
    standings: pd.DataFrame
    """ranks.csv's rows of this matrix, one per unit (unit, host, pairs, busbw_GBps, robust_z,
    outlier); empty without ranks.csv."""

    @property
    def value(self) -> str:
        """What the cells are called: algbw for send/recv (busbw factor 1, the same number),
        busbw for an all_reduce on each pair."""
        return "algbw" if self.primitive == "send_recv" else "busbw"

    @property
    def outliers(self) -> list[str]:
        """The units ranks.csv flags as outliers."""
        if self.standings.empty:
            return []
        return [str(u) for u in self.standings.loc[self.standings["outlier"], "unit"]]


def is_pair_row(rows: pd.DataFrame) -> pd.Series:
    """send_recv (or `distbench pairs --primitive allreduce`) rows of one numbered pair (src and
    dst are ranks or nodes, not 'all'/'next')."""
    return (
        rows["primitive"].isin(("send_recv", "all_reduce"))
        & rows["src"].astype(str).str.fullmatch(r"\d+")
        & rows["dst"].astype(str).str.fullmatch(r"\d+")
    )


def is_pairs_command(rows: pd.DataFrame) -> pd.Series:
    return rows["pattern"].astype(str).str.fullmatch(PAIRS_COMMAND)


def matrix_nnodes(rows: pd.DataFrame, owner: str) -> pd.Series:
    """nnodes that a matrix holds fixed: a `distbench pairs` row spans its own pair's nodes, so
    its run's pairs of one pattern share their largest count (one matrix, not one per span)."""
    widest = rows.groupby([rows[owner], rows["pattern"]])["nnodes"].transform("max")
    return widest.where(is_pairs_command(rows), rows["nnodes"])


def split_matrix_rows(comm: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(line rows, pair rows): pair rows whose case holds two or more pairs (`--pairs all`,
    `distbench pairs`); a single pair, and the ring (src 'all'), stay lines."""
    paired = is_pair_row(comm)
    if not paired.any():
        return comm, comm.iloc[0:0]
    owner = "run" if "run" in comm.columns else "source"
    pairs = comm[paired].assign(nnodes=lambda f: matrix_nnodes(f, owner))
    group = [pairs[c] for c in (owner, *MATRIX_CASE)]
    counts = (pairs["src"] + ">" + pairs["dst"]).groupby(group, observed=True).transform("nunique")
    matrix_index = counts[counts >= 2].index
    return comm.drop(index=matrix_index), comm.loc[matrix_index]


def read_ranks(runs: Iterable[RunData]) -> pd.DataFrame:
    """ranks.csv of every run that has one (a `distbench pairs` run), with a `run` column; a
    damaged file is one line (UsageError), a missing one is no rows."""
    frames = []
    for run in runs:
        path = run.path / RANKS_CSV
        if path.exists():
            frame = read_csv_strings(path, RANK_COLUMNS_BEFORE_FIRST_Z, RANKS_CSV)
            if "first_z" not in frame.columns:  # before v4's confirmations (migrations.py)
                frame = frame.assign(first_z="")
            frame = convert_numeric(frame, numeric_columns(RankRow), path)
            frames.append(frame.assign(run=run.name, outlier=frame["outlier"] == "true"))
    if not frames:
        return pd.DataFrame(columns=[*RANK_COLUMNS, "run"])
    return pd.concat(frames, ignore_index=True)


def standings_of(ranks: pd.DataFrame, rows: pd.DataFrame, axis: str, size: int) -> pd.DataFrame:
    """The ranks.csv rows that belong to a matrix's rows (same runs, primitive, mode, env, size,
    level), one per unit (the median over repeated runs; an outlier in any of them is one)."""
    first = rows.iloc[0]
    mine = ranks[
        ranks["run"].isin(set(rows["run"]))
        & (ranks["primitive"] == first["primitive"])
        & (ranks["mode"] == first["mode"])
        & (ranks["env"] == first["env"])
        & (ranks["size_bytes"] == size)
        & (ranks["level"] == axis)
    ]
    unit = (mine["rank"] if axis == "rank" else mine["node"].astype(int)).astype(str)
    grouped = mine.assign(unit=unit).groupby("unit", sort=False)
    table = grouped.agg(
        host=("host", "first"),
        pairs=("pairs", "max"),
        busbw_GBps=("busbw_GBps", "median"),
        robust_z=("robust_z", "median"),
        outlier=("outlier", "any"),
    ).reset_index()
    return table.sort_values("unit", key=lambda u: u.astype(int), ignore_index=True)


def pair_matrices(pairs: pd.DataFrame, ranks: pd.DataFrame | None = None) -> list[PairMatrix]:
    """busbw (GB/s; send/recv: = algbw) src x dst at the largest size of each source x case, with
    the standings of `ranks` (read_ranks) where the rows came from `distbench pairs`."""
    ranks = pd.DataFrame(columns=[*RANK_COLUMNS, "run"]) if ranks is None else ranks
    if "run" not in pairs.columns:
        pairs = pairs.assign(run=pairs["source"])
    pairs = pairs.assign(nnodes=matrix_nnodes(pairs, "run"))
    matrices = []
    group = ["source", *MATRIX_CASE]
    several_modes = pairs["mode"].nunique() > 1
    titled = [c for c in TITLED if pairs[c].nunique() > 1]
    for key, rows in pairs.groupby(group, observed=True, dropna=False):
        case = dict(zip(group, key, strict=True))
        size = int(rows["size_bytes"].max())
        at = rows[rows["size_bytes"] == size]
        command = bool(is_pairs_command(rows).all())
        axis = "node" if str(case["pattern"]).startswith("node-") else "rank"
        units = int(str(case["world_size"]))
        if axis == "node":
            units = 1 + int(max(rows["src"].astype(int).max(), rows["dst"].astype(int).max()))
        labels = [str(u) for u in range(units)]
        matrix = (
            at.pivot_table(index="src", columns="dst", values="busbw_GBps", aggfunc="median")
            .reindex(index=labels, columns=labels)
            .astype(float)
        )
        if command:  # both directions in one measurement: the lower half is the upper's
            matrix = matrix.combine_first(matrix.T)
        title = f"{case['source']} · {units} {axis}s · {format_size(size)} {case['dtype']}"
        title += f" · {case['primitive']}" if pairs["primitive"].nunique() > 1 else ""
        title += "".join(f" · {c}={case[c]}" for c in titled if case[c] != "")
        title += f" · {case['mode']}" if several_modes else ""
        standings = standings_of(ranks, at, axis, size) if command else ranks.iloc[0:0]
        matrices.append(PairMatrix(title, case["primitive"], matrix, axis, command, standings))
    return matrices[:MAX_MATRICES]
