"""compare's per-primitive verdict (#16, reports/primitive_rule.py): a primitive whose rows are
slower than the other primitives' rows fails the gate and names itself; a shift of the whole run,
a small effect, or too few rows do not. Exact numbers on hand-made ratios, then the verdict as
compare renders it on canned launches."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest

from distbench.reports.checks import METRICS, Threshold, load_thresholds
from distbench.reports.compare import EXIT_REGRESSED, compare_runs
from distbench.reports.compare_render import render_json, render_markdown, render_text
from distbench.reports.noise import bh_adjust
from distbench.reports.primitive_rule import MIN_ROWS, judge_primitives, primitive_lines
from tests.reports.test_gate_replay import DATA, INTERLEAVED, ROOT, bench_gate

NAMES = ("all_reduce", "broadcast", "reduce", "all_gather")


def noisy(rng: random.Random, level: float, rows: int = 12) -> list[tuple[float, float]]:
    """(slowdown, scale) of `rows` rows: `level` with 5 % noise, each row's threshold 10 %."""
    return [(level * rng.lognormvariate(0.0, 0.05), 1.1) for _ in range(rows)]


def test_a_slower_primitive_is_named_and_the_rest_pass() -> None:
    rng = random.Random(3)
    ratios = {name: noisy(rng, 1.25 if name == "broadcast" else 1.0) for name in NAMES}
    verdicts = {v.primitive: v for v in judge_primitives(ratios, 0.05, 0.15, fdr=True)}
    assert [name for name, v in verdicts.items() if v.regressed] == ["broadcast"]
    hit = verdicts["broadcast"]
    assert hit.rows == 12
    assert hit.beyond_others == pytest.approx(1.25, rel=0.05)
    assert hit.q_value < 1e-4
    line = primitive_lines(list(verdicts.values()), 0.15)
    assert line == [f"regressed: {hit.describe()}"]
    assert line[0].startswith("regressed: broadcast (12 rows, median +2")


def test_a_whole_run_shift_a_small_effect_and_few_rows_do_not_fail() -> None:
    rng = random.Random(4)
    shifted = {name: noisy(rng, 1.4) for name in NAMES}  # the box was busier: every row alike
    assert not any(v.regressed for v in judge_primitives(shifted, 0.05, 0.15, fdr=True))
    small = {name: noisy(rng, 1.12 if name == "reduce" else 1.0, 40) for name in NAMES}
    verdict = {v.primitive: v for v in judge_primitives(small, 0.05, 0.15, fdr=True)}["reduce"]
    assert verdict.q_value < 0.05 and not verdict.regressed  # real, but below the 15 % effect
    few = {"all_reduce": [(1.0, 1.1)] * 20, "broadcast": [(2.0, 1.1)] * (MIN_ROWS - 1)}
    assert judge_primitives(few, 0.05, 0.15, fdr=True) == []  # 4 rows: neither side votes
    few["reduce"] = [(1.0, 1.1)] * MIN_ROWS
    tested = [v.primitive for v in judge_primitives(few, 0.05, 0.15, fdr=True)]
    assert tested == ["all_reduce", "reduce"]
    assert "none slower" in primitive_lines(judge_primitives(shifted, 0.05, 0.1, True), 0.1)[0]


def test_bh_is_across_the_primitives() -> None:
    """Seven primitives, one with a few slow rows: its q is its p through Benjamini-Hochberg
    over the seven p-values, larger than its p."""
    rng = random.Random(5)
    ratios = {f"p{i}": noisy(rng, 1.0, 8) for i in range(7)}
    ratios["p0"] = sorted(ratios["p0"])[:4] + [(1.3, 1.1)] * 4
    plain = judge_primitives(ratios, 0.05, 0.0, fdr=False)
    with_bh = judge_primitives(ratios, 0.05, 0.0, fdr=True)
    assert all(v.q_value == v.p_value for v in plain)
    expected = bh_adjust([v.p_value for v in plain])
    assert [v.q_value for v in with_bh] == pytest.approx(expected)
    assert with_bh[0].q_value > with_bh[0].p_value


def test_compare_names_the_slowed_primitive_in_every_format() -> None:
    """Two canned launches, broadcast 1.5x slower in the second, gated as nightly.sh does (the
    shipped thresholds file, time_us_min): the verdict names broadcast in text, Markdown and JSON.
    (How often 1.25x is caught over many nights is test_gate_replay's and the docs' business.)"""
    gate = bench_gate()
    launches = gate.load_launches(INTERLEAVED)
    names = sorted(launches)
    rng = random.Random(0)
    base = gate.night(launches[names[0]], names[0], 12, rng, None, 1.0)
    slowed = gate.night(launches[names[1]], names[1], 12, rng, "broadcast", 1.5)
    shipped = load_thresholds(ROOT / "ci" / "thresholds-nightly-cpu.toml", Threshold(5, True))
    rule = replace(gate.alternatives()[0].rule, thresholds=shipped)
    comparison = compare_runs(base, slowed, METRICS["time_us_min"], rule)
    assert comparison.exit_code == EXIT_REGRESSED
    assert [p.primitive for p in comparison.primitives if p.regressed] == ["broadcast"]
    text = render_text(comparison)
    assert text.splitlines()[0].startswith("distbench compare: REGRESSION")
    assert "regressed: broadcast (12 rows, median" in text
    assert "- regressed: broadcast (12 rows" in render_markdown(comparison)
    body = json.loads(render_json(comparison))
    assert [p["primitive"] for p in body["primitives"] if p["regressed"]] == ["broadcast"]


def test_a_row_s_threshold_scales_its_vote() -> None:
    """The same 20 % slowdown on quiet rows (threshold 5 %) and on noisy rows (threshold 200 %):
    set against others whose scatter is 10 % on 5 % rows, only the quiet rows' 20 % stands out."""
    rng = random.Random(6)
    others = {f"o{i}": [(rng.lognormvariate(0.0, 0.1), 1.05) for _ in range(12)] for i in range(4)}
    quiet = judge_primitives({**others, "x": [(1.2, 1.05)] * 12}, 0.05, 0.15, fdr=True)
    noisy_rows = judge_primitives({**others, "x": [(1.2, 3.0)] * 12}, 0.05, 0.15, fdr=True)
    assert {v.primitive: v for v in quiet}["x"].regressed
    assert not {v.primitive: v for v in noisy_rows}["x"].regressed


def test_sequential_runs_do_not_get_the_per_primitive_vote() -> None:
    """On sequential launches a primitive's rows move together, so the test would not hold its
    level (21 % of replayed unchanged nights failed it): compare leaves it out and says why."""
    gate = bench_gate()
    launches = gate.load_launches(DATA)
    names = sorted(launches)
    rng = random.Random(0)
    base = gate.night(launches[names[0]], names[0], 12, rng, None, 1.0)
    slowed = gate.night(launches[names[1]], names[1], 12, rng, "broadcast", 3.0)
    comparison = compare_runs(base, slowed, METRICS["time_us_min"], gate.alternatives()[0].rule)
    assert comparison.primitives == []
    assert any(
        n.startswith("per-primitive test off: trial order sequential") for n in comparison.notes
    )
