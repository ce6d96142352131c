"""ci/bench_stats.py's baseline windows: nights of 3 launches against 14 nights need windows
across recording groups (--join-baselines), since no recorded group holds 42 launches; a window
no group holds is refused in one line (exit 2), not replayed as 0 of 0 nights."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.paths import ROOT

sys.path.insert(0, str(ROOT / "ci"))
from bench_stats import baseline_nights, main, table
from stats_data import Values
from stats_gate import fixed_baselines

SIZES = {"g1": 36, "g2": 32, "g3": 32}  # the recorded groups' launches (docs/gate.md#measured)


def recorded() -> Values:
    groups = [g for g, n in SIZES.items() for _ in range(n)]
    y = np.zeros((len(groups), 2))
    return Values(y, y.copy(), [f"{g}/L{i}" for i, g in enumerate(groups)], groups)


def test_three_launches_against_fourteen_nights_need_windows_across_groups() -> None:
    values = recorded()
    apart = baseline_nights(values, list(SIZES), 3, join=False)
    assert {g: len(n) for g, n in apart.items()} == {"g1": 12, "g2": 10, "g3": 10}
    assert fixed_baselines(apart, 14) == []
    joined = baseline_nights(values, list(SIZES), 3, join=True)
    assert list(joined) == ["g1+g2+g3"] and len(joined["g1+g2+g3"]) == 32
    windows = fixed_baselines(joined, 14)
    assert len(windows) == 2 and all(len(nights) == 14 for _name, nights in windows)
    taken = [launch for _name, nights in windows for night in nights for launch in night]
    assert len(taken) == len(set(taken)) == 2 * 14 * 3  # disjoint windows of whole nights
    groups_in = {values.groups[night[0]] for night in windows[0][1]}
    assert groups_in == set(SIZES)  # spread over every group, as a user's spans days


def test_the_default_windows_stay_inside_one_group() -> None:
    every = baseline_nights(recorded(), list(SIZES), 2, join=False)
    windows = fixed_baselines(every, 8)
    assert [name for name, _n in windows] == [
        f"{g} nights {k}::2" for g in SIZES for k in (1, 2)
    ]  # the 6 fixed baselines of docs/gate.md's first table


def test_a_window_no_group_holds_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--only", "gate", "--per-night", "3", "--window", "14"]) == 2
    err = capsys.readouterr().err
    assert "no baseline window of 14 nights of 3 launches" in err
    assert "g1: 12, g2: 10, g3: 10" in err and "--join-baselines" in err


def test_every_parts_rows_print_as_figures() -> None:
    """The table of `python ci/bench_stats.py` holds the gate's rates (already formatted) beside
    history's and the intervals' rows, whose value is a float with its Monte Carlo error: those
    print as 0.871 +-0.011 and 94.8 %, not 0.8713333333333334, and ok as yes, NO or nothing."""
    history = {"name": "h", "value": 0.8713333333333334, "mc_error": 0.0106, "target": ">= 0.90",
               "ok": np.False_}  # fmt: skip
    interval = {"name": "i", "value": 0.9484, "mc_error": 0.006, "target": "95 % +- 3",
                "ok": True, "interval": "+-0.6% (MC)", "note": "2000 rows"}  # fmt: skip
    untargeted = {"name": "u", "value": 4.0, "mc_error": float("nan"), "target": "", "ok": None}
    gate = {"name": "g", "value": "2.5% (2/80)", "interval": "[0.3%, 8.7%]", "ok": ""}
    assert table([history, interval, untargeted, gate]).splitlines()[2:] == [
        "| h | 0.871 | +-0.011 (MC) |  | >= 0.90 | NO |  |",
        "| i | 94.8% | +-0.6% (MC) |  | 95 % +- 3 | yes | 2000 rows |",
        "| u | 4 |  |  |  |  |  |",
        "| g | 2.5% (2/80) | [0.3%, 8.7%] |  |  |  |  |",
    ]
