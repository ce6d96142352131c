"""distbench.stats.box through the engine: a night on which most primitives moved at once, each its
own way (one of them both ways, or one or two against all the others), cannot tell (the box
changed under the window); one primitive slower, four of seven moved, or several primitives slowed
alike by a change of code, are judged as before; learning and absolute mode never say it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from distbench.stats import box
from distbench.stats.box import BOX_REASON, BOX_SHARE, box_changed
from distbench.stats.components import Prior
from distbench.stats.engine import WHOLE_RUN, Outcome, Settings, SideMatrix, judge_matrices
from distbench.stats.verdict import CANNOT_TELL, IMPROVED, NO_CHANGE, REGRESSED

PRIMITIVES = ("all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "all_to_all",
              "send_recv")  # fmt: skip
SEVEN = [
    {"kind": "comm", "primitive": p, "size_bytes": str(s), "world_size": "2", "dtype": "float32"}
    for p in PRIMITIVES
    for s in (1024, 65536)
]
PRIOR = Prior(0.02**2, 4.0, "test")


def matrix(y: np.ndarray, name: str) -> SideMatrix:
    launches = [f"{name}{i}" for i in range(len(y))]
    return SideMatrix(
        launches, [f"{name}-night{i // 2}" for i in range(len(y))], y, np.full_like(y, np.nan)
    )


def judge(
    moves: dict[str, float | tuple[float, float]], min_nights: int = 5, keys: list | None = None
) -> Outcome:
    """Six nights of two launches against tonight's two, each named primitive moved by its log
    change (a pair: its 1K rows, then its 64K rows); the rest as the window."""
    keys = keys or SEVEN
    rng = np.random.default_rng(5)
    base = rng.normal(0.0, 0.02, size=(12, len(keys)))
    cur = rng.normal(0.0, 0.02, size=(2, len(keys)))
    for i, key in enumerate(keys):
        move = moves.get(key["primitive"], 0.0)
        if isinstance(move, tuple):
            move = move[0] if key["size_bytes"] == "1024" else move[1]
        cur[:, i] += move
    return judge_matrices(keys, matrix(base, "b"), matrix(cur, "c"), [0.05] * len(keys),
                          [PRIOR] * len(keys), Settings(min_nights=min_nights), PRIOR)  # fmt: skip


def named(outcome: Outcome) -> set[str]:
    return {
        j.hypothesis.primitive.split(":")[1]
        for j in (*outcome.rows, *outcome.bands)
        if j.state in (REGRESSED, IMPROVED) and j.hypothesis.primitive != WHOLE_RUN
    }


def test_most_primitives_moving_each_its_own_way_cannot_tell_and_says_which() -> None:
    moves = {"all_reduce": 0.3, "broadcast": -0.3, "reduce": (0.4, -0.4), "all_gather": -0.4,
             "reduce_scatter": 0.3, "all_to_all": -0.3}  # fmt: skip
    outcome = judge(moves)
    assert outcome.box == (
        "the box changed: 7 of 7 primitives moved beyond the window at once (all_reduce, "
        "reduce_scatter, send_recv slower; all_gather, all_to_all, broadcast faster; reduce both "
        "ways)"  # send_recv unmoved reads slower beyond the rest
    )
    others = [j for j in (*outcome.rows, *outcome.bands) if j.hypothesis.primitive != WHOLE_RUN]
    assert {(j.state, j.reason) for j in others} == {(CANNOT_TELL, BOX_REASON)}
    assert all(j.detectable == math.inf for j in others)  # nothing vouched for
    (whole,) = [j for j in outcome.bands if j.hypothesis.primitive == WHOLE_RUN]
    assert whole.state == NO_CHANGE  # its own verdict: the median moved little
    assert named(outcome) == set()


def test_the_whole_run_keeps_its_verdict_when_the_box_changed() -> None:
    moves: dict[str, float | tuple[float, float]] = {p: 0.6 for p in PRIMITIVES}
    moves |= {
        "all_reduce": (0.9, 0.3),
        "broadcast": 0.3,
        "reduce": 1.0,
        "all_gather": 0.2,
        "reduce_scatter": 0.95,
    }  # every primitive slower, unevenly: all_reduce both ways
    outcome = judge(moves)
    assert outcome.box.startswith("the box changed: ")
    (whole,) = [j for j in outcome.bands if j.hypothesis.primitive == WHOLE_RUN]
    assert whole.state == REGRESSED and whole.reason == ""


@pytest.mark.parametrize("moved", [4, 5])
def test_the_line_is_more_than_two_thirds_of_the_primitives(moved: int) -> None:
    signs: list[float | tuple[float, float]] = [(0.4, -0.4), -0.4, 0.5, -0.5, 0.4]
    outcome = judge(dict(zip(PRIMITIVES[:moved], signs, strict=False)))
    if moved <= BOX_SHARE * len(PRIMITIVES):
        assert outcome.box == "" and named(outcome) == set(PRIMITIVES[:moved])
    else:
        assert outcome.box.startswith("the box changed: ")  # 5 moved: the others read faster too


def test_a_primitive_both_ways_or_a_small_minority_is_the_box_each_way_split_is_code() -> None:
    def ways(slower: int, faster: int, both: int = 0) -> dict[str, str]:
        kinds = ["slower"] * slower + ["faster"] * faster + ["both"] * both
        return {f"comm:p{i}": way for i, way in enumerate(kinds)}

    assert box.MINORITY == 2
    assert box.mixed(ways(1, 6)) and box.mixed(ways(0, 6)) and box.mixed(ways(5, 2))
    assert box.mixed(ways(3, 3, both=1))  # the box's change depends on the size
    assert not box.mixed(ways(3, 4)) and not box.mixed(ways(4, 3)) and not box.mixed(ways(3, 3))
    moves = {p: (-0.4, 0.0) for p in PRIMITIVES[1:6]} | {"all_reduce": 0.4}  # the 1K rows faster
    assert judge(moves).box == (
        "the box changed: 7 of 7 primitives moved beyond the window at once (all_reduce, "
        "send_recv slower; all_gather, all_to_all, broadcast, reduce, reduce_scatter both ways)"
    )


@pytest.mark.parametrize("slowed", [3, 4])
def test_a_change_of_code_slowing_several_primitives_alike_is_named(
    slowed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    moves = {p: 0.25 for p in PRIMITIVES[:slowed]}
    outcome = judge(moves)
    ways = box.moved([*outcome.rows, *outcome.bands])
    assert len(ways) > BOX_SHARE * len(PRIMITIVES)  # the others read faster, beyond the rest
    assert outcome.box == ""  # each one way, split 3 and 4
    regressed = {
        j.hypothesis.primitive.split(":")[1]
        for j in (*outcome.rows, *outcome.bands)
        if j.state == REGRESSED and j.hypothesis.primitive != WHOLE_RUN
    }
    assert regressed == set(PRIMITIVES[:slowed])
    monkeypatch.setattr(box, "TWO_SIDED", False)  # the share alone, as held out on g10
    assert judge(moves).box.startswith("the box changed: ")


def test_one_primitive_slower_is_judged_as_before() -> None:
    outcome = judge({"broadcast": 0.25})
    assert outcome.box == "" and named(outcome) == {"broadcast"}


def test_learning_and_absolute_mode_never_say_the_box_changed() -> None:
    moves = {"all_reduce": 0.3, "broadcast": -0.3, "reduce": 0.4, "all_gather": -0.4,
             "reduce_scatter": 0.3, "all_to_all": -0.3}  # fmt: skip
    assert judge(moves, min_nights=7).box == ""  # 6 nights: still learning
    three = [k for k in SEVEN if k["primitive"] in PRIMITIVES[:3]]
    outcome = judge(moves, keys=three)
    assert not outcome.relative and outcome.box == "" and named(outcome)


def test_box_changed_counts_primitives_not_hypotheses() -> None:
    outcome = judge({"broadcast": 0.4})
    assert box_changed([*outcome.rows, *outcome.bands], 1) == "the box changed: 1 of 1 " + (
        "primitives moved beyond the window at once (broadcast slower)"
    )
    assert box_changed([*outcome.rows, *outcome.bands], 2) == ""
