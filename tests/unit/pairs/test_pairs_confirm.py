"""The confirmation of `distbench pairs`' outliers, on numbers: which rounds run again and which
pairs they record, the confirmation's measurement ids (past the plan, one per pair, whatever was
flagged), how the re-measured pairs' values combine with the first ones, and the standings that
name a unit only when both measurements flag it. The rank side is tested on real gloo ranks in
tests/integration/pairs/test_pairs_e2e.py."""

from __future__ import annotations

import math
from itertools import chain

import pytest

from distbench.launch.planned import planned_id
from distbench.pairs.outliers import confirm, flagged_units, remeasured, standings
from distbench.pairs.spec import (
    DEFAULT_THRESHOLD,
    PairsSpec,
    circle_rounds,
    confirmation_index,
    confirmation_rounds,
    plan_size,
    remeasured_pair,
)


def matrix(n: int, slow: set[int], factor: float = 8.0) -> list[tuple[int, int, float, float]]:
    """Pair busbw of n units, a pair running at its slower end: 10 GB/s, or 10 / factor with a
    slow unit in it; each pair's noise known (log variance 0.01)."""
    return [
        (a, b, 10.0 / (factor if slow & {a, b} else 1.0), 0.01)
        for a in range(n)
        for b in range(a + 1, n)
    ]


def test_the_rounds_that_hold_a_flagged_units_pair_run_again_whole() -> None:
    rounds = circle_rounds(4)  # [(0,3),(1,2)], [(0,2),(1,3)], [(0,1),(2,3)]
    assert confirmation_rounds(rounds, []) == []
    assert confirmation_rounds(rounds, [1]) == rounds  # every round holds one of its 3 pairs
    recorded = [p for pairs in confirmation_rounds(rounds, [1]) for p in pairs]
    assert [p for p in recorded if remeasured_pair(p, [1])] == [(1, 2), (1, 3), (0, 1)]
    five = circle_rounds(5)  # one unit idles each round: unit 4's bye round is not run again
    again = confirmation_rounds(five, [4])
    assert len(again) == 4 and all(any(4 in p for p in pairs) for pairs in again)
    recorded = [p for pairs in again for p in pairs if remeasured_pair(p, [4])]
    assert sorted(recorded) == [(0, 4), (1, 4), (2, 4), (3, 4)]
    two = confirmation_rounds(circle_rounds(6), [2, 5])
    recorded = [p for pairs in two for p in pairs if remeasured_pair(p, [2, 5])]
    assert sorted(recorded) == sorted({(min(a, u), max(a, u)) for u in (2, 5) for a in range(6)
                                       if a != u})  # fmt: skip


def test_confirmation_ids_lie_past_the_plan_one_per_pair_whatever_was_flagged() -> None:
    """A pair's confirmation index is the plan plus its position among the launch's pairs: it
    depends on no flagged set, so a resumed run whose first standings differ (its kept pairs
    lack their trials' noise) never reads one pair's kept row as another's."""
    workload = PairsSpec(sizes=(1024, 4096), modes=("throughput",))
    plan = plan_size(workload, 4)
    assert plan == 12  # 6 pairs x 2 sizes
    pairs = [p for _ in workload.sizes for p in chain(*circle_rounds(4))]
    indices = [confirmation_index(plan, position) for position in range(len(pairs))]
    assert indices == list(range(12, 24))
    assert planned_id("ws4/i11", "", 4, plan) and not planned_id("ws4/i12", "", 4, plan)
    assert planned_id("nccl/ws4/i3", "nccl/", 4, plan)
    assert not planned_id("ws2/i3", "", 4, plan)  # another world size's
    assert planned_id("ws4/x7", "", 4, plan)  # an id of another form counts as planned


def test_remeasured_pairs_take_their_new_values_and_keep_their_order() -> None:
    first = matrix(4, {1})
    again = [(0, 1, 10.0, 0.02), (1, 2, 9.0, 0.02), (1, 3, 11.0, 0.02)]
    combined = remeasured(first, again)
    assert [(a, b) for a, b, *_ in combined] == [(a, b) for a, b, *_ in first]
    assert combined[0] == (0, 1, 10.0, 0.02) and combined[3] == (1, 2, 9.0, 0.02)
    assert combined[1] == first[1]  # (0, 2): not re-measured


def test_a_unit_slow_only_the_first_time_is_not_an_outlier() -> None:
    first_results = matrix(4, {1})
    first = standings(first_results, DEFAULT_THRESHOLD)
    assert flagged_units(first) == [1]
    healthy_again = [(a, b, 10.0, 0.01) for a, b, *_ in first_results if 1 in (a, b)]
    again = standings(remeasured(first_results, healthy_again), DEFAULT_THRESHOLD)
    final = confirm(first, again)
    assert flagged_units(final) == []
    one = next(s for s in final if s.unit == 1)
    assert one.first_z <= -DEFAULT_THRESHOLD < one.robust_z  # flagged once, cleared
    assert one.busbw_GBps == pytest.approx(10.0)
    others = [s for s in final if s.unit != 1]
    assert others == [s for s in first if s.unit != 1]  # the others keep their first standing
    assert all(s.first_z == s.robust_z for s in others)


def test_a_unit_slow_both_times_is_an_outlier_with_its_second_z() -> None:
    first_results = matrix(4, {1})
    first = standings(first_results, DEFAULT_THRESHOLD)
    slow_again = [(a, b, 10.0 / 6.0, 0.01) for a, b, *_ in first_results if 1 in (a, b)]
    again = standings(remeasured(first_results, slow_again), DEFAULT_THRESHOLD)
    final = confirm(first, again)
    assert flagged_units(final) == [1]
    one = next(s for s in final if s.unit == 1)
    assert one.busbw_GBps == pytest.approx(10.0 / 6.0)
    noise = math.sqrt(0.01 + 0.01)  # its best pair's and the others' (above the 0.1 floor)
    assert one.robust_z == pytest.approx(-math.log(6.0) / noise)  # the second measurement's z
    assert one.first_z == pytest.approx(-math.log(8.0) / noise)
    assert all(s.outlier == (s.robust_z <= -DEFAULT_THRESHOLD) for s in final)


def test_only_units_flagged_the_first_time_can_be_outliers() -> None:
    """The second standings may flag a unit the first did not (its pairs were not measured
    again): it stays as the first measurement judged it."""
    first = standings(matrix(6, set()), DEFAULT_THRESHOLD)
    odd = standings(matrix(6, {3}), DEFAULT_THRESHOLD)
    assert flagged_units(first) == [] and flagged_units(odd) == [3]
    assert confirm(first, odd) == first


def test_the_pairs_table_says_how_it_was_measured_and_which_pair_ran_again() -> None:
    """The collectives' `#` line, and a confirmation's row named `again` (its pair's first row
    stays as it was)."""
    from distbench.pairs.table import render_pairs_table

    def row(src: int, dst: int, p50: str) -> dict[str, str]:
        return {"src": str(src), "dst": str(dst), "ranks": f"{src}-{dst}", "size_bytes": "1024",
                "mode": "throughput", "env": "", "time_us_p50": p50, "busbw_GBps": "0.04",
                "primitive": "send_recv", "backend": "gloo", "device": "cpu", "world_size": "4",
                "timer": "perf_counter"}  # fmt: skip

    text = render_pairs_table([row(1, 2, "90"), row(0, 3, "20"), row(1, 2, "21")])
    lines = text.splitlines()
    assert lines[0].startswith("# pairs send_recv  backend=gloo  device=cpu  world_size=4")
    assert "time=p50 of max over the pair's ranks" in lines[0]
    cells = [line.split()[:2] for line in lines[3:]]
    assert cells == [["1-2", "1-2"], ["0-3", "0-3"], ["1-2", "again"]]
