"""history's relative mode (reports/history/detect.py relative_series, judge_history; the common
level of distbench.stats.common): a shift of the whole box is the whole run's series, not every
case's change point; a primitive that slowed is seen beyond the box's drift; the primitives that
did not slow do not read faster; the whole run keeps its own drift; quiet rows are not judged
beyond loud rows' noise; tied values keep their ties. Each check is shown to bite: the test
judges the same nights with the mode off, the whole run pooled with the cases, plain-mean votes
or the grid left out, and sees the check fail."""

from __future__ import annotations

import gzip
import json
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from distbench.reports.history.detect import (
    Series,
    judge_history,
    judge_series,
    own_steps,
    relative_series,
    whole_run_case,
)
from distbench.reports.history.lines import mode_line
from distbench.stats.changepoint import detect_changes
from distbench.stats.common import common_level

NIGHTS, AT = 60, 40
PRIMITIVES = ["send_recv"] * 36 + [
    p
    for p in ("all_gather", "all_reduce", "all_to_all", "broadcast", "reduce", "reduce_scatter")
    for _ in range(12)
]
"""The shipped nightly matrix's 108 rows, by primitive."""
STEP = math.log(1.2)
ROOT = Path(__file__).resolve().parents[3]


def test_primitives_are_the_recorded_matrix_rows() -> None:
    """This file's PRIMITIVES and ci/bench_stats_history.py's are the rows of the shipped
    nightly matrix as recorded (tests/data/launches-nightly-cpu.json.gz): its groups stay the
    matrix's when the matrix changes."""
    with gzip.open(ROOT / "tests" / "data" / "launches-nightly-cpu.json.gz", "rt") as source:
        recorded = Counter(case["primitive"] for case in json.load(source)["cases"])
    sys.path.insert(0, str(ROOT / "ci"))
    import bench_stats_history

    assert Counter(PRIMITIVES) == recorded
    assert bench_stats_history.PRIMITIVES == PRIMITIVES


def ar1(rng: np.random.Generator, count: int, phi: float) -> np.ndarray:
    x = np.empty((count, NIGHTS))
    x[:, 0] = rng.standard_normal(count)
    for t in range(1, NIGHTS):
        x[:, t] = phi * x[:, t - 1] + math.sqrt(1 - phi * phi) * rng.standard_normal(count)
    return x


def box_history(seed: int, box_sd: float = 0.08, own_sd: float = 0.04) -> np.ndarray:
    """(108, NIGHTS) log values: one drift of the box every row shares (AR(1) phi 0.5) and each
    row's own noise."""
    rng = np.random.default_rng(seed)
    box = ar1(rng, 1, 0.5) * box_sd
    return box + own_sd * rng.standard_normal((len(PRIMITIVES), NIGHTS))


def as_series(logs: np.ndarray, primitives: list[str] = PRIMITIVES) -> list[Series]:
    nights = np.arange(logs.shape[1])
    return [
        Series(f"{p} row {i}", "comm", "time_us_min", 0, nights, np.exp(y), 0.0, p)
        for i, (y, p) in enumerate(zip(logs, primitives, strict=True))
    ]


def found_at(judged_series: list[Series], judged: list, at: int = AT) -> dict[str, int]:
    """Per case name: 1 when a change point lies within 2 nights of `at`, else 0."""
    return {
        s.case: int(any(abs(f.index - at) <= 2 for f in j.found))
        for s, j in zip(judged_series, judged, strict=True)
    }


def test_the_common_level_is_the_median_of_one_vote_per_primitive() -> None:
    """A night's level: each primitive's mean deviation (many rows, one vote), the median of
    the votes; `exclude` leaves one primitive out; nan where no primitive has a value."""
    deviation = np.array(
        [
            [0.0, 0.2, 0.4, 0.1, 0.3],
            [np.nan, np.nan, 0.5, 0.0, 0.1],
            [np.nan, np.nan, np.nan, np.nan, np.nan],
        ]
    )
    primitives = np.array(["a", "a", "b", "c", "d"])
    assert common_level(deviation, primitives, "")[:2] == pytest.approx([0.2, 0.1])
    assert common_level(deviation, primitives, "b")[:2] == pytest.approx([0.1, 0.05])
    assert np.isnan(common_level(deviation, primitives, "")[2])
    assert np.isnan(common_level(deviation[:, :2], primitives[:2], "a")).all()


def test_a_shift_of_the_whole_box_is_the_whole_runs_not_every_cases() -> None:
    """Every row 20 % slower from night 40: relative mode names the whole run at that night and
    almost no case; judged on their own levels, the cases fire (the check bites)."""
    logs = box_history(1) + STEP * (np.arange(NIGHTS) >= AT)
    series, judged = judge_history(as_series(logs), NIGHTS, relative=True)
    hits = found_at(series, judged)
    whole = whole_run_case("comm")
    assert series[-1].case == whole and hits[whole] == 1
    assert sum(len(j.found) for j in judged[:-1]) <= 3
    absolute, judged_absolute = judge_history(as_series(logs), NIGHTS, relative=False)
    assert len(absolute) == len(PRIMITIVES)
    assert sum(found_at(absolute, judged_absolute).values()) >= 50


def test_one_primitive_slower_is_seen_beyond_the_boxs_drift() -> None:
    """all_reduce 20 % slower from night 40 while the box drifts twice as much as a row's own
    noise: relative mode finds most of its rows, and nothing else; on their own levels, where
    the box's drift is noise, fewer are found (the mode earns its place)."""
    rows = np.array([p == "all_reduce" for p in PRIMITIVES])
    relative_hits, absolute_hits, elsewhere = 0, 0, 0
    for seed in range(3):
        logs = box_history(10 + seed) + np.where(rows[:, None], STEP, 0) * (np.arange(NIGHTS) >= AT)
        series, judged = judge_history(as_series(logs), NIGHTS, relative=True)
        hits = found_at(series, judged)
        relative_hits += sum(hits[s.case] for s, r in zip(series, rows, strict=False) if r)
        elsewhere += sum(len(j.found) for j, r in zip(judged[:108], rows, strict=True) if not r)
        elsewhere += len(judged[-1].found)
        absolute, judged_absolute = judge_history(as_series(logs), NIGHTS, relative=False)
        hits = found_at(absolute, judged_absolute)
        absolute_hits += sum(hits[s.case] for s, r in zip(absolute, rows, strict=True) if r)
    assert relative_hits >= 0.8 * 36, relative_hits
    assert elsewhere <= 3, elsewhere
    assert absolute_hits < relative_hits, (absolute_hits, relative_hits)


def test_steps_found_are_taken_out_of_the_votes() -> None:
    """Three of seven primitives 25 % slower from night 40: the level the rest are judged
    against moves with them (the median of seven votes, three of them stepped, is the largest
    of the four others) unless their own steps leave their votes, as judge_history's second
    look does (STEP_ROUNDS); then it stays within a few thousandths."""
    rng = np.random.default_rng(5)
    logs = 0.03 * rng.standard_normal((len(PRIMITIVES), NIGHTS))
    slowed = np.array([p in ("all_gather", "all_reduce", "all_to_all") for p in PRIMITIVES])
    logs += np.where(slowed[:, None], math.log(1.25), 0) * (np.arange(NIGHTS) >= AT)

    def moved(whole: Series) -> float:
        level = np.log(whole.values)
        return float(level[AT:].mean() - level[:AT].mean())

    first = relative_series(as_series(logs), NIGHTS)
    judged = judge_series(first)
    assert [i for i in range(108) if judged[i].found] == list(np.flatnonzero(slowed))
    assert moved(first[-1]) > 0.012  # one look: the level moved with them
    once = relative_series(as_series(logs), NIGHTS, {i: own_steps(first[i], judged[i])
                                                      for i in np.flatnonzero(slowed)})  # fmt: skip
    assert moved(once[-1]) > 0.006  # their steps measured against that level: half of it stays
    series, _judged = judge_history(as_series(logs), NIGHTS, relative=True)
    assert abs(moved(series[-1])) < 0.003


def test_the_whole_run_keeps_its_own_drift() -> None:
    """The whole run is the box's own level, a drift the cases judged beyond it do not share:
    it is judged at its own phi. Pooled with the cases (phi near 0), a box drifting with phi 0.9
    shows false change points in most histories; at its own phi in at most one of eight."""
    own, pooled = 0, 0
    for seed in range(8):
        rng = np.random.default_rng(100 + seed)
        logs = ar1(rng, 1, 0.9) * 0.10 + 0.04 * rng.standard_normal((108, NIGHTS))
        series = relative_series(as_series(logs), NIGHTS)
        judged = judge_series(series)
        own += bool(judged[-1].found)
        together = detect_changes([s.judged for s in series], [0.0] * len(series), 0.05, 0.05)
        pooled += bool(together[-1].found)
    assert own <= 1, own
    assert pooled >= 3, pooled


def test_fewer_than_four_primitives_or_lone_nights_stay_on_their_own_level() -> None:
    """Relative mode needs MIN_RELATIVE primitives of a kind and metric; a night that fewer
    measured has no level, and a relative series skips it, unless most of its nights are such
    (then it is judged on its own level); the mode line says which."""
    rng = np.random.default_rng(2)
    three = as_series(0.05 * rng.standard_normal((6, 20)), ["a", "a", "b", "b", "c", "c"])
    same = relative_series(three, 20)
    assert len(same) == 6 and all(s.common is None for s in same)
    assert "fewer than 4 primitives" in mode_line(same, True)
    four = as_series(0.05 * rng.standard_normal((4, 20)), ["a", "b", "c", "d"])
    lone = Series("e alone", "comm", "time_us_min", 0, np.arange(21), np.ones(21), 0.0, "e")
    out = relative_series([*four, lone], 21)
    assert [s.common is None for s in out[:5]] == [False] * 5
    assert len(out[4].runs) == 20 and out[4].runs[-1] == 19  # the night it alone measured: out
    assert out[-1].case == whole_run_case("comm") and len(out[-1].runs) == 20
    late = Series("e late", "comm", "time_us_min", 0, np.arange(15, 35), np.ones(20), 0.0, "e")
    out = relative_series([*four, late], 35)  # mostly nights no one else measured
    assert out[4].common is None and len(out[4].runs) == 20
    assert mode_line(out, True).startswith("relative: each case judged beyond the rest")
    assert mode_line(out, False).startswith("absolute (--absolute)")


def test_a_steady_trend_of_the_whole_run_is_said_not_tested() -> None:
    """A whole run 1 % slower every night has no step (it is judged at its own drift), but its
    verdict says how far its level went; a case's verdict never carries that figure, nor does a
    whole run that stayed within the floor."""
    from distbench.reports.history.load import RunInfo
    from distbench.reports.history.verdict import trend_text, verdict

    runs = [RunInfo(f"/r{i}", f"n{i}", f"2026-01-{i + 1:02d}", "abc", 4) for i in range(30)]
    ramp = np.exp(0.01 * np.arange(30))
    whole = Series(whole_run_case("comm"), "comm", "time_us_min", 0, np.arange(30), ramp, 0.0)
    judged = judge_series([whole])[0]
    seen = verdict(whole, judged, runs, 7, 0.05)
    moved = math.expm1(0.01 * 23) * 100  # the last 7 nights' mean against the first 7's
    said = f"its level moved {moved:+.0f} % from its first 7 nights to its last 7"
    assert seen.reason.endswith(said), seen.reason
    case = Series("all_reduce 1M", "comm", "time_us_min", 0, np.arange(30), ramp, 0.0, "all_reduce")
    assert trend_text(case, 7, 0.05) == ""
    flat = Series(whole.case, "comm", "time_us_min", 0, np.arange(30), np.ones(30), 0.0)
    assert trend_text(flat, 7, 0.05) == ""


def heterogeneous(seed: int, nights: int = 30) -> np.ndarray:
    """(108, nights): rows whose own noise differs fifty-fold (sd 0.004 to 0.2, as a 64M row and
    a 1K row of this box), with no drift of the box."""
    rng = np.random.default_rng(seed)
    sd = np.where(np.arange(len(PRIMITIVES)) % 2 == 0, 0.004, 0.2)
    return sd[:, None] * rng.standard_normal((len(PRIMITIVES), nights))


def test_a_quiet_row_is_not_judged_beyond_the_noise_of_loud_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Votes weighted by each row's own night-to-night change: the level the quiet rows are
    judged beyond stays quiet, their drift is pooled, and a 10 % step of broadcast's quiet rows
    is found. With a plain mean (compare's votes, put back here) the loud rows' noise is in the
    level, every quiet row carries it, the rows count as few independent series and the steps
    are found less (the check bites)."""
    from distbench.reports.history import detect

    quiet = (np.arange(len(PRIMITIVES)) % 2 == 0) & np.array([p == "broadcast" for p in PRIMITIVES])
    logs = heterogeneous(3) + np.where(quiet[:, None], math.log(1.1), 0) * (np.arange(30) >= 22)
    series, judged = judge_history(as_series(logs), 30, relative=True)
    found = sum(
        found_at(series, judged, 22)[s.case] for s, q in zip(series, quiet, strict=False) if q
    )
    assert all(bool(j.noise.pooled[0]) for j in judged[:108])
    assert found == quiet.sum(), found
    monkeypatch.setattr(detect, "row_weights", lambda d: np.ones(d.shape[1]))
    series, judged = judge_history(as_series(logs), 30, relative=True)
    plain = sum(
        found_at(series, judged, 22)[s.case] for s, q in zip(series, quiet, strict=False) if q
    )
    assert plain < found, plain


def test_tied_values_keep_their_ties(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows whose nights repeat one value (a coarse timer, or the same fastest trial night after
    night, as ci/bench_history.py's nights do) are judged on their ranks: the
    common level is taken out on their grid, so their ties stay ties and their drift is pooled.
    A level finer than their values would order every tie as the level does, and the rows
    would count as one (the check bites: on_grid left out, nothing is pooled)."""
    from distbench.reports.history import detect

    rng = np.random.default_rng(4)
    grid = np.log(1.05) * (rng.random((len(PRIMITIVES), 30)) < 0.2)  # most nights one value
    tied = np.arange(len(PRIMITIVES)) % 4 != 0
    logs = np.where(tied[:, None], grid, heterogeneous(5))  # a row in four is loud
    series, judged = judge_history(as_series(logs), 30, relative=True)
    assert all(
        len(np.unique(np.round(s.judged, 9))) <= 4 for s, t in zip(series, tied, strict=False) if t
    )
    assert all(bool(j.noise.pooled[0]) for j in judged[:108])
    monkeypatch.setattr(detect, "on_grid", lambda common, logs: common)
    _series, judged = judge_history(as_series(logs), 30, relative=True)
    assert not any(bool(j.noise.pooled[0]) for j in judged[:108])


def test_a_night_few_primitives_measured_is_skipped_not_the_mode() -> None:
    """Night 30 measured only all_reduce and broadcast (a short sweep that completed): it has no
    level, so their relative series skip it and keep relative mode; all_reduce 20 % slower from
    night 40 is still found there, by run, through the second look."""
    logs = box_history(7) + np.where(
        np.array([p == "all_reduce" for p in PRIMITIVES])[:, None], STEP, 0
    ) * (np.arange(NIGHTS) >= AT)
    series = []
    for s, p in zip(as_series(logs), PRIMITIVES, strict=True):
        keep = (
            np.arange(NIGHTS) != 30
            if p not in ("all_reduce", "broadcast")
            else np.ones(NIGHTS, bool)
        )
        series.append(Series(s.case, s.kind, s.metric, 0, s.runs[keep], s.values[keep], 0.0, p))
    judged_series, judged = judge_history(series, NIGHTS, relative=True)
    ours = [i for i, p in enumerate(PRIMITIVES) if p == "all_reduce"]
    assert all(
        judged_series[i].common is not None and 30 not in judged_series[i].runs for i in ours
    )
    runs_found = [int(judged_series[i].runs[f.index]) for i in ours for f in judged[i].found]
    assert sum(abs(r - AT) <= 2 for r in runs_found) >= 10, runs_found
    assert 30 not in judged_series[-1].runs  # the whole run skips it too


def test_a_primitives_rows_are_one_group_on_the_same_nights_only() -> None:
    """group_labels: one label per primitive (kind, metric) whose rows share their nights; the
    whole run, rows without a primitive and a row with other nights are in no group with them."""
    from distbench.reports.history.detect import group_labels

    rows = as_series(np.zeros((len(PRIMITIVES), NIGHTS)))
    short = rows[0].__class__(**{**rows[0].__dict__, "runs": rows[0].runs[1:],
                                 "values": rows[0].values[1:]})  # fmt: skip
    bare = Series("bare", "comm", "time_us_min", 0, rows[1].runs, rows[1].values, 0.0)
    whole = Series(whole_run_case("comm"), "comm", "time_us_min", 0, rows[1].runs,
                   rows[1].values, 0.0, "")  # fmt: skip
    labels = group_labels([short, *rows[1:], bare, whole])
    assert len({labels[i] for i in range(1, 36)}) == 1  # send_recv's other 35 rows
    assert labels[0] not in labels[1:36] and labels[36] not in labels[1:36]
    assert len(set(labels[1:108])) == 7 and labels[-2:] == [-1, -1]


def test_a_primitives_rows_stepping_together_are_said_to() -> None:
    """all_reduce's 12 rows 8 % slower from night 40 beside a drifting box: judged as history
    judges them (relative), most are found within 2 nights of it (34 of 36 when written) and say
    their primitive's rows stepped with them (the verdict says so, the change table marks their
    p *); without the groups (every label -1) fewer are (19: missed, or placed by their own
    noise)."""
    from distbench.reports.history import detect
    from distbench.reports.history.load import RunInfo
    from distbench.reports.history.render import cells
    from distbench.reports.history.verdict import change_point, verdict

    runs = [RunInfo(f"/r{i}", f"n{i}", f"2026-{i // 28 + 1:02d}-{i % 28 + 1:02d}", "abc", 4)
            for i in range(NIGHTS)]  # fmt: skip

    ours = np.array([p == "all_reduce" for p in PRIMITIVES])
    found = {True: 0, False: 0}
    together = 0
    for seed in range(3):
        logs = box_history(30 + seed, own_sd=0.05)
        logs[ours] += math.log(1.08) * (np.arange(NIGHTS) >= AT)
        for grouped in (True, False):
            with pytest.MonkeyPatch.context() as patch:
                if not grouped:
                    patch.setattr(detect, "group_labels", lambda s: [-1] * len(s))
                judged_series, judged = judge_history(as_series(logs), NIGHTS, True)
            hits = found_at(judged_series, judged, AT)
            found[grouped] += sum(
                hits[s.case] for s, o in zip(judged_series, ours, strict=False) if o
            )
            if grouped:
                marks = [
                    f.together for j in judged[:108] for f in j.found if abs(f.index - AT) <= 2
                ]
                together += sum(marks)
                first = next(i for i in np.flatnonzero(ours) if judged[i].found)
                series, one = judged_series[first], judged[first]
                point = change_point(series, one, one.found[0].index, runs)
                assert point.together and cells(point)[9].endswith("*")
                said = verdict(series, one, runs, NIGHTS - AT + 2, 0.05)
                assert said.reason.endswith("(its primitive's rows stepped with it)"), said
    assert found[True] >= 30 and found[True] >= found[False] + 10, found
    assert together >= 30


def test_a_rows_verdict_says_what_its_primitive_together_would_show() -> None:
    """A null history: every row's verdict gives what it would catch alone and, where it is
    smaller, what it would when every row of its primitive takes the step at once (never larger
    than alone: either way finds it); the group's series is judged as it is, not ranked
    (SeriesChanges.ranked)."""
    from distbench.reports.history.load import RunInfo
    from distbench.reports.history.verdict import verdict

    runs = [RunInfo(f"/r{i}", f"n{i}", f"2026-{i // 28 + 1:02d}-{i % 28 + 1:02d}", "abc", 4)
            for i in range(NIGHTS)]  # fmt: skip
    judged_series, judged = judge_history(as_series(box_history(41, own_sd=0.05)), NIGHTS, True)
    said = [
        verdict(s, j, runs, 7, 0.05) for s, j in zip(judged_series[:108], judged[:108], strict=True)
    ]
    assert all(v.together <= v.detectable for v in said)
    for v, s in zip(said, judged_series, strict=False):
        assert (f"every {s.primitive} row at once" in v.reason) == (v.together < v.detectable)
    assert all(j.group is not None and not j.group.ranked and j.ranked for j in judged[:108])
