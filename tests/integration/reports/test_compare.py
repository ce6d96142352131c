"""distbench compare / baseline. The half that launches or runs for seconds; the in-process half,
and the file's whole story: tests/unit/reports/test_compare.py."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from distbench.collectors.schema import MANIFEST_JSON
from distbench.parse import UsageError
from distbench.reports.compare.sides import load_side
from distbench.reports.compare.window import save_night
from distbench.stats.verdict import NO_CHANGE, REGRESSED
from tests.unit.reports.test_compare import judge, levels, night, render_text_lines, states, window

# ---- verdicts: a window of nights -----------------------------------------------------------


def test_a_window_of_quiet_nights_sees_a_small_slowdown(tmp_path: Path) -> None:
    rng = random.Random(3)
    base = window(tmp_path, rng, 6, levels("all_reduce"))
    same = judge(base, night(tmp_path / "same", levels("all_reduce"), rng))
    assert states(same) == [NO_CHANGE] * 3 and same.exit_code == 0
    assert all(j.detectable < 0.15 for j in same.outcome.rows)  # 2 % launch noise: sees 15 %
    slow = judge(base, night(tmp_path / "slow", levels("all_reduce", scale=1.2), rng))
    assert states(slow) == [REGRESSED] * 3 and slow.exit_code == 1
    (band,) = [j for j in slow.outcome.bands if j.hypothesis.band == ()]
    assert band.state == REGRESSED and 0.15 < band.change < 0.25
    low, high = band.interval()
    assert low < 0.2 < high


def test_bandwidth_metric_regresses_when_time_grows(tmp_path: Path) -> None:
    rng = random.Random(4)
    base = window(tmp_path, rng, 6, levels("all_reduce"))
    slow = night(tmp_path / "slow", levels("all_reduce", scale=1.2), rng)
    assert states(judge(base, slow, metric="busbw")) == [REGRESSED] * 3


def test_a_change_under_the_threshold_floor_is_not_a_regression(tmp_path: Path) -> None:
    rng = random.Random(5)
    base = window(tmp_path, rng, 6, levels("all_reduce"))
    slow = night(tmp_path / "slow", levels("all_reduce", scale=1.2), rng)
    comparison = judge(base, slow, threshold="30%")
    assert states(comparison) == [NO_CHANGE] * 3
    assert all(j.detectable >= 0.30 for j in comparison.outcome.rows)  # the floor counts


def test_a_slower_primitive_is_named_beyond_the_rest_of_the_run(tmp_path: Path) -> None:
    """Relative mode: a box 30 % busier tonight moves every primitive alike and is not called on
    any primitive; one primitive 25 % slower is, as a band."""
    rng = random.Random(6)
    table = levels("all_reduce", "broadcast", "all_gather", "reduce")
    base = window(tmp_path, rng, 6, table)
    busier = judge(base, night(tmp_path / "busy", {k: v * 1.3 for k, v in table.items()}, rng))
    assert busier.outcome.relative
    named = {j.hypothesis.primitive for j in busier.regressions()}
    assert named <= {"*:whole run"}
    slow = {k: v * (1.25 if k[0] == "broadcast" else 1.0) for k, v in table.items()}
    comparison = judge(base, night(tmp_path / "slow", slow, rng))
    assert {j.hypothesis.primitive for j in comparison.regressions()} == {"comm:broadcast"}
    text = "\n".join(render_text_lines(comparison))
    assert "regressed: broadcast, every row: +2" in text and "beyond the rest of the run" in text


def test_a_size_band_is_seen_as_one(tmp_path: Path) -> None:
    rng = random.Random(7)
    table = levels("all_reduce", "broadcast")
    base = window(tmp_path, rng, 6, table)
    slow = {k: v * (1.25 if k == ("all_reduce", 1 << 20) or k == ("all_reduce", 65536) else 1.0)
            for k, v in table.items()}  # fmt: skip
    comparison = judge(base, night(tmp_path / "slow", slow, rng))
    bands = [dict(j.hypothesis.band) for j in comparison.regressions() if not j.hypothesis.is_row]
    assert {"size_from": "65536"} in bands


# ---- the baseline window ------------------------------------------------------------------------


def test_baseline_save_appends_nights_and_keeps_the_last_k(tmp_path: Path) -> None:
    rng = random.Random(11)
    store = tmp_path / "store"
    for n in range(4):
        target, what = save_night(
            night(tmp_path / f"n{n}", levels("all_reduce"), rng), "w", store, keep=3
        )
    assert what == "3 of 3 nights kept; dropped the oldest 1"
    side = load_side(target)
    assert side.window and side.nights == ["n1", "n2", "n3"] and len(side.launches) == 6
    assert sorted(p.name for p in (target / "nights").iterdir()) == ["n1", "n2", "n3"]
    again = save_night(tmp_path / "n3", "w", store)[1]  # a retried CI step saves it again
    assert again == "night 'n3' is in it already, nothing changed (3 nights)"
    assert load_side(target).nights == ["n1", "n2", "n3"]
    saved, what = save_night(tmp_path / "n0", "w", store, force=True)
    assert load_side(saved).nights == ["n0"] and what == "1 of 14 nights kept"


def dated_night(path: Path, day: int, rng: random.Random) -> Path:
    """A night whose launches started on 2026-12-DAY, as distbench's manifests say."""
    night(path, levels("all_reduce"), rng)
    for n, folder in enumerate(sorted(path.glob("launch-*"))):
        manifest = json.loads((folder / MANIFEST_JSON).read_text())
        manifest["started_utc"] = f"2026-12-{day:02d}T02:0{n}:00Z"
        (folder / MANIFEST_JSON).write_text(json.dumps(manifest))
    return path


def test_a_night_in_the_window_is_not_judged_against_itself(tmp_path: Path) -> None:
    rng = random.Random(13)
    store = tmp_path / "store"
    for day in range(1, 5):
        target, _ = save_night(dated_night(tmp_path / f"d{day}", day, rng), "w", store)
    tonight = tmp_path / "d4"  # saved by --update-baseline, then judged again (a CI retry)
    comparison = judge(target, tonight)
    assert f"{tonight} is night d4 of baseline w: judged against its other 3 night(s)" in (
        comparison.notes
    )
    assert len(comparison.inputs[0].base) == 6  # 3 nights of 2 launches, not 4
    itself = judge(tonight, tonight)
    assert any("hold the same launches: a run against itself" in n for n in itself.notes)
    other = judge(target, dated_night(tmp_path / "d5", 5, rng))
    assert not any("judged against its other" in n for n in other.notes)
    # a night whose manifests lost their start is known by its results
    lost = tmp_path / "lost" / "d3"
    shutil.copytree(tmp_path / "d3", lost)
    for path in lost.rglob(MANIFEST_JSON):
        manifest = json.loads(path.read_text())
        path.write_text(json.dumps({k: v for k, v in manifest.items() if k != "started_utc"}))
    held = judge(target, lost).notes
    assert f"{lost} is night d3 of baseline w: judged against its other 3 night(s)" in held


def test_a_window_keeps_its_keep_orders_by_when_nights_ran_and_holds_a_launch_once(
    tmp_path: Path,
) -> None:
    rng = random.Random(12)
    store = tmp_path / "store"

    def dated(name: str, day: int) -> Path:
        return dated_night(tmp_path / name, day, rng)

    for name, day in (("d2", 2), ("d4", 4), ("d3", 3)):  # saved out of the order they ran
        target, what = save_night(dated(name, day), "w", store, keep=3)
    assert load_side(target).nights == ["d2", "d3", "d4"]  # by when they ran
    target, what = save_night(dated("d5", 5), "w", store)  # no --keep: the window's own 3
    assert what == "3 of 3 nights kept; dropped the oldest 1"
    assert load_side(target).nights == ["d3", "d4", "d5"]
    with pytest.raises(UsageError, match="ran before every night of baseline 'w'"):
        save_night(dated("d1", 1), "w", store)  # it would be dropped at once
    with pytest.raises(UsageError, match="is one launch of the night"):
        save_night(tmp_path / "d5" / "launch-1", "w", store)  # a part of a night
    again = shutil.copytree(tmp_path / "d5" / "launch-1", tmp_path / "again")
    with pytest.raises(UsageError, match="has already, in night 'd5'"):
        save_night(again, "w", store)  # the same launch twice
    assert load_side(target).nights == ["d3", "d4", "d5"]
    other = dated_night(tmp_path / "elsewhere" / "d5", 6, rng)  # another run, d5's name
    with pytest.raises(UsageError, match="holds another night named 'd5'"):
        save_night(other, "w", store)
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match="is a file, not a folder"):
        save_night(tmp_path / "d5", "w", tmp_path / "file")
