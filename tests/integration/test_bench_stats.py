"""The verdicts' benchmark (ci/bench_stats.py, ci/bench_stats_report.py, ci/bench_confirm.py,
ci/bench_several.py)
runs on the recorded launches and prints every part of docs/gate.md's tables, the per-night rates
with their block intervals: a smoke, no rate asserted (the rates are the benchmark's, on 1,000
replications; --quick draws 40)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.paths import ROOT

pytestmark = pytest.mark.slow
FIXTURE = ROOT / "tests" / "data" / "launches-nightly-cpu.json.gz"


def bench(script: str, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, str(ROOT / "ci" / script), "--quick", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def table_rows(text: str) -> dict[str, list[str]]:
    """The markdown table's rows by their first cell."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and not set(line) <= set("|-: "):
            rows[cells[0]] = cells[1:]
    return rows


def test_the_gate_benchmark_prints_every_part() -> None:
    out = bench("bench_stats.py")
    header = out.splitlines()[0]
    found = r"launches: (\d+) in groups (.+?); tuned on (\S+); held out: (.+?) \("
    groups = re.search(found, header)
    assert groups, header
    launches, recorded, tuned, held = groups.groups()
    assert int(launches) >= 100 and len(recorded.split(", ")) >= 3
    assert not set(tuned.split(",")) & set(held.split(", ")), "tuned on the held-out launches"
    rows = table_rows(out)
    names = list(rows)
    assert any(n.startswith("A/A, baseline ") for n in names), names  # fixed baselines
    overall = next(cells for n, cells in rows.items() if n.startswith("A/A overall"))
    assert re.fullmatch(r"\[\d+\.\d%, \d+\.\d%\] of \d+", overall[2]), overall  # block interval
    for kind in ("every row of one primitive", "one size band", "one world size", "one dtype"):
        assert any(n.startswith(f"A/B 25 %: {kind}") for n in names), names
    assert any("claiming <= 25 %" in n for n in names)  # detectable_change's calibration
    assert any(n.startswith("compare 95 % interval") for n in names)
    assert any(n.startswith("compare: false coverage rate beside verdicts") for n in names)
    assert any("p50 interval" in n for n in names) and any("--precision" in n for n in names)
    assert any("--order interleaved" in n for n in names), names  # sequential against interleaved
    assert any(n.startswith("fit ") for n in names)
    for phi in ("iid", "AR(1) phi 0.5", "AR(1) phi 0.8"):
        assert f"false change points per 100 null series, {phi}" in rows, names
    pooled = [n for n in names if "histories of 108" in n and "phi pooled" in n]
    assert any(n.startswith("20 % steps found") for n in pooled), names  # docs/history.md
    assert any("any false change point" in n for n in pooled), names
    recorded = [n for n in names if n.startswith("recorded sessions of this box as histories")]
    assert len(recorded) == 2 and all("relative (the default)" in n for n in recorded), names
    assert any("found in the whole-run series" in n for n in names), names
    assert any(n.startswith("nights drawn as ci/bench_history.py writes them") for n in names)
    claims = [n for n in names if n.startswith("claimed step")]  # history's 'would catch', checked
    assert any("the simulated claim" in n for n in claims), names
    ranges = [n for n in names if "the range holds the step's night" in n]  # changepoint_where
    assert len(ranges) >= 8 and any(n.startswith("recorded sessions") for n in ranges), names
    rate = re.compile(
        r"^\d+(\.\d+)?% \(\d+/\d+\)$|^\d+(\.\d+)?%$|^\d+(\.\d+)?(e[-+]\d+)?$|^\d+ rows$"
    )
    for name, cells in rows.items():
        if name != "name":
            assert rate.match(cells[0]), (name, cells)


def test_the_report_benchmark_prints_its_coverage() -> None:
    out = bench("bench_stats_report.py")
    assert "held out" in out.splitlines()[0]
    rows = [line for line in out.splitlines() if line.startswith("| one launch a side")]
    assert rows and all(re.search(r"\d+\.\d% \+-\d+\.\d% \(MC\)", r) for r in rows), out


def test_the_confirmation_benchmark_pairs_each_night_with_the_next() -> None:
    """ci/bench_confirm.py --quick: a night alone and confirmed by the next, A/A and catches; a
    confirmed failure is two failed nights, so there are never more of them than failed nights;
    the nights that cannot tell (exit 5) are counted apart."""
    out = bench("bench_confirm.py")
    found = dict(re.findall(r"^(.+?): [\d.]+% \((\d+)/\d+\)", out, re.M))
    names = ("A/A, a night alone", "A/A, confirmed by the next")
    assert set(names) | {"catch, a night alone", "catch, confirmed by the next"} <= set(found), out
    assert int(found[names[1]]) <= int(found[names[0]])
    assert int(found["catch, confirmed by the next"]) <= int(found["catch, a night alone"])
    blocks = re.findall(r", blocks \[(\d+\.\d)%, (\d+\.\d)%\] of \d+$", out, re.M)
    assert len(blocks) == 7 and all(float(a) <= float(b) for a, b in blocks), out
    # exit 5 (the box changed) under the policy: never more than the nights judged, and the
    # catches of the nights it could tell leave those nights out
    box = "catch, cannot tell (the box changed), confirmed policy"
    told = re.search(
        r"^catch, confirmed, of the nights it could tell: [\d.]+% \(\d+/(\d+)\)", out, re.M
    )
    total = re.search(r"^catch, confirmed by the next: [\d.]+% \(\d+/(\d+)\)", out, re.M)
    assert told and total and int(told[1]) == int(total[1]) - int(found[box]), out


def test_the_several_primitives_benchmark_counts_every_night_once() -> None:
    """ci/bench_several.py --quick: one window, 6 nights, k = 0 to 3 slowed primitives; each k's
    nights end one way each (the four endings add up to the nights judged), k primitives make
    C(7, k) times the unchanged nights, a night counted as a silent miss is one that passed, and
    the claims as scoped: none on an unchanged night or a night the box changed, and their misses
    are nights that passed."""
    out = bench("bench_several.py")
    cell = r" (\d+) \(\d+%\) \|"
    rows = re.findall(rf"^\| (\d) \| (\d+) \|{cell * 7}$", out, re.M)
    assert [int(r[0]) for r in rows] == [0, 1, 2, 3], out
    unchanged = int(rows[0][1])
    for k, nights, *ends, own, claimed, silent in (tuple(map(int, r)) for r in rows):
        assert nights == unchanged * (1, 7, 21, 35)[k] and sum(ends) == nights, out
        assert own <= ends[3] and silent <= min(ends[3], claimed), out
        assert claimed <= nights - ends[2] and (claimed > 0) == (k > 0), out
