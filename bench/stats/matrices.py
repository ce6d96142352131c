"""A comparison's launch values as arrays: launches x rows per side (SideMatrix), each launch's
night as an integer, and which rows each hypothesis holds (a sparse hypotheses x rows matrix).
engine.judge_matrices judges on them; a replay (ci/stats_gate.py) builds them once per night.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

from distbench.stats.arrays import WHOLE_RUN
from distbench.stats.components import LaunchValue
from distbench.stats.family import Hypothesis

if TYPE_CHECKING:
    from distbench.stats.engine import RowInput


@dataclass
class SideMatrix:
    """One side's launch values as arrays: launches x rows (nan where a launch lacks a row)."""

    launches: list[str]
    nights: list[str]
    y: np.ndarray
    within: np.ndarray

    @classmethod
    def of(cls, rows: Sequence[RowInput], side: str) -> SideMatrix:
        order: dict[str, str] = {}
        for row in rows:
            for v in getattr(row, side):
                order.setdefault(v.launch, v.night)
        index = {launch: i for i, launch in enumerate(order)}
        y = np.full((len(order), len(rows)), np.nan)
        within = np.full_like(y, np.nan)
        for j, row in enumerate(rows):
            for v in getattr(row, side):
                y[index[v.launch], j] = v.y
                within[index[v.launch], j] = v.within
        return cls(list(order), list(order.values()), y, within)

    def values(self, members: Sequence[int]) -> list[LaunchValue]:
        """A row's (one member) or a band's launch values: the mean of its rows' y in every
        launch that holds them all; the within part of a mean of independent trials."""
        cols = list(members)
        y, within = self.y[:, cols], self.within[:, cols]
        full = ~np.isnan(y).any(axis=1)
        means = y[full].mean(axis=1)
        parts = within[full].sum(axis=1) / len(cols) ** 2
        return [
            LaunchValue(float(m), float(w), self.launches[i], self.nights[i])
            for m, w, i in zip(means, parts, np.flatnonzero(full), strict=True)
        ]

    def shifted(self, levels: np.ndarray) -> SideMatrix:
        """Every value beyond its launch's common level (a launch without one: dropped)."""
        return SideMatrix(self.launches, self.nights, self.y - levels[:, None], self.within)


def night_index(names: Sequence[str]) -> np.ndarray:
    """Each launch's night as an integer (0 .. K-1, by first appearance)."""
    index = {name: i for i, name in enumerate(dict.fromkeys(names))}
    return np.array([index[name] for name in names], dtype=int)


def membership(family: Sequence[Hypothesis], rows: int) -> sparse.csr_array:
    """hypotheses x rows, 1 where the row belongs to the hypothesis. Sparse: 10,000 rows declare
    ~16,000 hypotheses, and a dense matrix of them took 1.3 GB and most of judge_matrices' time;
    the whole run's members (relative mode) are its extra row's alone."""
    lengths = [1 if h.primitive == WHOLE_RUN else len(h.members) for h in family]
    columns = [
        rows - 1 if h.primitive == WHOLE_RUN else i for h in family
        for i in (h.members if h.primitive != WHOLE_RUN else (0,))
    ]  # fmt: skip
    hypotheses = np.repeat(np.arange(len(family)), lengths)
    ones = np.ones(len(columns))
    return sparse.csr_array((ones, (hypotheses, columns)), shape=(len(family), rows))
