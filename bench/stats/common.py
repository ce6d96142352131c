"""The common level of a run: what moves every primitive alike (the box's load, its clock), taken
out so that each primitive is judged beyond the rest of the run. compare and the nightly gate
take it out of each launch (engine.judge_family), history out of each night
(reports/history/detect.py), with this one rule:

    level = common_level(deviation, primitives, exclude="all_reduce")

`deviation` is (units, rows): each row's log value in a unit (a launch, a night) minus its mean
over every unit. A unit's level is the median, over the primitives other than `exclude`, of the
primitive's mean deviation in that unit. One vote per primitive: a primitive of many rows
(send/recv's patterns) does not outvote the rest, and one slower primitive among several moves
the median little. Leaving the judged primitive out means its own regression cannot hide itself.
With `exclude=""` every primitive votes: the level of the whole run, a hypothesis (compare) or a
series (history) of its own.
"""

from __future__ import annotations

import warnings

import numpy as np

MIN_RELATIVE = 4
"""Primitives a comparison or a history needs for relative mode: each is judged against a median
of the primitives' levels (the others' in a comparison, every one in history), and with fewer
than three others one slower primitive would move that median (two primitives: the other one
would read improved by as much)."""


def common_level(
    deviation: np.ndarray, primitives: np.ndarray, exclude: str, weights: np.ndarray | None = None
) -> np.ndarray:
    """(units,): each unit's common level (module docstring); nan where no other primitive has a
    value in the unit (or no other primitive is there at all). `weights` (rows,): a primitive's
    vote is its rows' weighted mean deviation (default, as compare votes: their plain mean)."""
    others = sorted(set(primitives.tolist()) - {exclude})
    if not others:
        return np.full(len(deviation), np.nan)
    weight = np.ones(deviation.shape[1]) if weights is None else np.asarray(weights, float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-nan slices: a unit with no row
        votes = np.column_stack([vote(deviation[:, primitives == p], weight[primitives == p])
                                 for p in others])  # fmt: skip
        return np.nanmedian(votes, axis=1)


def vote(deviation: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """(units,): the rows' weighted mean deviation in each unit, over the rows with a value
    (nan where none has)."""
    present = np.isfinite(deviation)
    total = (np.where(present, deviation, 0.0) * weight).sum(axis=1)
    return total / np.where(present, weight, 0.0).sum(axis=1)
