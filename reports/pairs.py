"""send/recv all-pairs rows (`--pairs all`): which rows form a src x dst matrix, and the matrices.

A matrix is one case of the schema's key (COMM_CASE_COLUMNS) with src and dst left free, so two
backends, devices or node counts never share one.
"""

from __future__ import annotations

import pandas as pd

from distbench.collectors.schema import COMM_CASE_COLUMNS
from distbench.parse import format_size

MATRIX_CASE = [c for c in COMM_CASE_COLUMNS if c not in ("src", "dst")]
"""What one matrix holds fixed: the case columns except its two axes."""
MAX_MATRICES = 9
TITLED = ("backend", "device", "nnodes", "op")
"""Case columns named in a matrix's title when the matrices differ in them."""


def is_pair_row(rows: pd.DataFrame) -> pd.Series:
    """send_recv rows of one numbered pair (src and dst are ranks, not 'all'/'next')."""
    return (
        (rows["primitive"] == "send_recv")
        & rows["src"].astype(str).str.fullmatch(r"\d+")
        & rows["dst"].astype(str).str.fullmatch(r"\d+")
    )


def split_matrix_rows(comm: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(line rows, all-pairs rows): send_recv rows with numeric src and dst whose case holds two
    or more pairs (`--pairs all`); a single pair, and the ring (src 'all'), stay lines."""
    paired = is_pair_row(comm)
    if not paired.any():
        return comm, comm.iloc[0:0]
    pairs = comm[paired]
    owner = "run" if "run" in comm.columns else "source"
    group = [pairs[c] for c in (owner, *MATRIX_CASE)]
    counts = (pairs["src"] + ">" + pairs["dst"]).groupby(group, observed=True).transform("nunique")
    matrix_index = counts[counts >= 2].index
    return comm.drop(index=matrix_index), comm.loc[matrix_index]


def pair_matrices(pairs: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """algbw (GB/s) src x dst at the largest size of each source x case."""
    matrices = []
    group = ["source", *MATRIX_CASE]
    several_modes = pairs["mode"].nunique() > 1
    titled = [c for c in TITLED if pairs[c].nunique() > 1]
    for key, rows in pairs.groupby(group, observed=True, dropna=False):
        case = dict(zip(group, key, strict=True))
        size = int(rows["size_bytes"].max())
        at = rows[rows["size_bytes"] == size]
        ranks = [str(r) for r in range(int(str(case["world_size"])))]
        matrix = (
            at.pivot_table(index="src", columns="dst", values="algbw_GBps", aggfunc="median")
            .reindex(index=ranks, columns=ranks)
            .astype(float)
        )
        title = f"{case['source']} · {case['world_size']} ranks · {format_size(size)}"
        title += f" {case['dtype']}"
        title += "".join(f" · {c}={case[c]}" for c in titled)
        matrices.append((title + (f" · {case['mode']}" if several_modes else ""), matrix))
    return matrices[:MAX_MATRICES]
