"""compare in CI (#29 item 3): `--format junit` read back with xml.etree and held to compare's
own JSON on the same inputs (a regression turned into a pass must fail that check); the JSON's
version key; `--github` (or GITHUB_ACTIONS=true) appending the Markdown to the job summary and
printing one `::error` line per regressed verdict; ci/nightly.sh leaving the summary to compare.

The regression: a copy of the checked-in cluster-a all_reduce run (tests/data) whose world-size-2
throughput rows are made 1,000x slower, which one launch a side can call (the default spread
hides anything under ~10x); the other rows stay `cannot tell`. Windows of nights for the other
states come from test_compare.py's fixture runs (the real sinks)."""

from __future__ import annotations

import csv
import json
import shutil
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from distbench.cli.app import run_cli
from distbench.reports.compare.github import error_lines, escape_data, escape_property
from distbench.reports.compare.judge import Comparison, compare_sides
from distbench.reports.compare.junit import render_junit
from distbench.reports.compare.options import CompareOptions
from distbench.reports.compare.render import JSON_VERSION, render_json
from distbench.reports.compare.sides import load_side
from distbench.stats.verdict import CANNOT_TELL, NO_CHANGE, REGRESSED
from tests.paths import ROOT as REPO

CLUSTER_A = REPO / "tests" / "data" / "cluster-a" / "allreduce"
SLOWED = {f"ws2/i{i}" for i in range(5)}
"""The world-size-2 throughput rows of cluster-a/allreduce (1K ... 4M)."""


def slowed_copy(target: Path, factor: float = 1000.0, which: set[str] = SLOWED) -> Path:
    """cluster-a/allreduce copied, the rows `which` `factor` times slower: every time column
    and sample multiplied, the bandwidths divided."""
    shutil.copytree(CLUSTER_A, target)

    def rewrite(name: str, column_factor: dict[str, float]) -> None:
        with (target / name).open(newline="") as file:
            rows = list(csv.DictReader(file))
        for row in rows:
            if row["measurement"] in which:
                for column, by in column_factor.items():
                    if row.get(column):
                        row[column] = repr(float(row[column]) * by)
        with (target / name).open("w", newline="") as file:
            writer = csv.DictWriter(file, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)

    with (target / "results.csv").open(newline="") as file:
        header = next(csv.reader(file))
    times = {c: factor for c in header if c.startswith("time_us_")}
    rewrite("results.csv", {**times, "algbw_GBps": 1 / factor, "busbw_GBps": 1 / factor})
    rewrite("samples.csv", {"time_us": factor})
    return target


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return slowed_copy(tmp_path_factory.mktemp("ci") / "slow")


@pytest.fixture(autouse=True)
def no_github(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test says itself whether it runs as a GitHub Actions job."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def judged(base: Path, current: Path, allow_missing: bool = False) -> Comparison:
    """compare_sides with compare's defaults, as the CLI calls it."""
    options = CompareOptions()
    return compare_sides(
        load_side(base), load_side(current), options.chosen_metric, options.thresholds,
        options.settings(), allow_missing,
    )  # fmt: skip


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run_cli(args)
    out, err = capsys.readouterr()
    return code, out, err


# ---- JUnit, held to compare's JSON ----------------------------------------------------------


def expected_outcome(item: dict[str, Any], allow_missing: bool) -> str:
    if "outcome" in item:  # a row not judged
        return "failure" if item["outcome"] == "only-baseline" and not allow_missing else "skipped"
    return {REGRESSED: "failure", CANNOT_TELL: "skipped"}.get(item["state"], "passed")


def case_outcome(case: ET.Element) -> tuple[str, ET.Element | None]:
    for tag, outcome in (("failure", "failure"), ("skipped", "skipped"), ("error", "error")):
        found = case.find(tag)
        if found is not None:
            return outcome, found
    return "passed", None


def check_junit(text: str, body: dict[str, Any], allow_missing: bool = False) -> None:
    """The JUnit report says what compare's JSON says: a case per row, band and row not judged,
    in order; a failure exactly for each regressed verdict (and missing row that fails the gate),
    a skip with its reason for each cannot tell; every count attribute true."""
    root = ET.fromstring(text)
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    expected = {"rows": body["rows"], "bands": body["bands"], "not judged": body["unmatched"]}
    assert set(suites) == {f"distbench compare: {name}" for name in expected}
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for name, items in expected.items():
        suite = suites[f"distbench compare: {name}"]
        cases = suite.findall("testcase")
        outcomes = [case_outcome(c) for c in cases]
        assert [o for o, _ in outcomes] == [expected_outcome(i, allow_missing) for i in items]
        for (outcome, node), item in zip(outcomes, items, strict=True):
            if outcome == "skipped" and "state" in item:
                reason = f": {item['reason']}" if item["reason"] else ""
                assert node is not None and node.get("message") == f"{CANNOT_TELL}{reason}"
            if outcome == "failure" and "state" in item:
                assert node is not None and node.get("type") == REGRESSED
        counts = {
            "tests": len(cases),
            "failures": sum(o == "failure" for o, _ in outcomes),
            "skipped": sum(o == "skipped" for o, _ in outcomes),
        }
        assert {k: int(suite.get(k, -1)) for k in counts} == counts, name
        assert suite.get("errors") == "0" and suite.get("time") is not None
        assert all(c.get("time") is not None and c.get("classname") for c in cases)
        totals = {k: totals[k] + counts[k] for k in totals}
    assert {k: int(root.get(k, -1)) for k in totals} == totals
    regressed = sum(i["state"] == REGRESSED for i in (*body["rows"], *body["bands"]))
    assert int(suites["distbench compare: rows"].get("failures", -1)) == body["summary"][REGRESSED]
    assert totals["failures"] >= regressed
    assert (totals["failures"] > 0) == (body["exit_code"] != 0)


def test_junit_on_a_checked_in_run_made_slower_matches_the_json(
    slow: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    base = str(CLUSTER_A)
    code, text, _ = cli(["compare", base, str(slow), "--format", "junit"], capsys)
    json_code, out, _ = cli(["compare", base, str(slow), "--format", "json"], capsys)
    body = json.loads(out)
    assert code == json_code == 1 and body["version"] == JSON_VERSION == 2
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    check_junit(text, body)
    assert body["summary"][REGRESSED] == 5 and body["summary"][CANNOT_TELL] == 15
    root = ET.fromstring(text)
    rows = root.find("testsuite[@name='distbench compare: rows']")
    assert rows is not None
    said = rows.findtext("system-out") or ""
    assert said.startswith("distbench compare: REGRESSION (5 regressed, 15 cannot tell")
    assert "what this comparison could see (80 % power):" in said  # what it could not see
    assert "learning the noise: 1 of 5 nights" in said
    first = rows.find("testcase")
    assert first is not None and first.get("classname") == "distbench.compare.all_reduce"
    assert (first.get("name") or "").startswith("all_reduce 1K float32 n=2")
    # --save FILE.xml is the same report
    saved = tmp_path / "verdict.xml"
    assert cli(["compare", base, str(slow), "--save", str(saved)], capsys)[0] == 1
    assert saved.read_text() == text


def test_a_regression_turned_into_a_pass_fails_the_check(slow: Path) -> None:
    """Mutations: one regressed row judged 'no change seen' before JUnit renders it (the JSON
    from the real verdicts), and a <failure> cut out of the XML; the check must see both."""
    comparison = judged(CLUSTER_A, slow)
    body = json.loads(render_json(comparison))
    check_junit(render_junit(comparison), body)  # the real one passes
    rows = comparison.outcome.rows
    index = next(i for i, j in enumerate(rows) if j.state == REGRESSED)
    mutated = replace(comparison.outcome, rows=[*rows])
    mutated.rows[index] = replace(rows[index], state=NO_CHANGE)
    with pytest.raises(AssertionError):
        check_junit(render_junit(replace(comparison, outcome=mutated)), body)
    root = ET.fromstring(render_junit(comparison))
    case = next(c for c in root.iter("testcase") if c.find("failure") is not None)
    failure = case.find("failure")
    assert failure is not None
    case.remove(failure)
    with pytest.raises(AssertionError):
        check_junit(ET.tostring(root, encoding="unicode"), body)


def test_junit_holds_a_path_xml_cannot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Markup and a control character in a run's path: the report still parses, the character
    shown as U+FFFD (XML 1.0 cannot hold it)."""
    odd = slowed_copy(tmp_path / 'run <&> "x"\x1b', which={"ws2/i0"})
    code, text, _ = cli(["compare", str(CLUSTER_A), str(odd), "--format", "junit"], capsys)
    root = ET.fromstring(text)
    current = root.find(".//property[@name='current']")
    assert current is not None and current.get("value") == str(odd).replace("\x1b", "\ufffd")
    assert int(root.get("tests", 0)) == 61 and code == 0


# ---- GitHub Actions -------------------------------------------------------------------------


def unescape(text: str) -> str:
    return text.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":").replace(
        "%2C", ","
    ).replace("%25", "%")  # fmt: skip


def test_workflow_command_escapes() -> None:
    assert escape_data("50%\r\nnext") == "50%25%0D%0Anext"
    assert escape_data("%0A") == "%250A"  # a % first: no escape is escaped twice
    assert escape_property("a: b, c 5%") == "a%3A b%2C c 5%25"
    assert escape_data("a: b, c") == "a: b, c"  # the message keeps : and ,


def test_github_flag_outside_actions_and_a_summary_it_cannot_write(
    slow: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = cli(["compare", str(CLUSTER_A), str(slow), "--github"], capsys)
    regressed = len(judged(CLUSTER_A, slow).regressions())  # the 5 rows and the bands over them
    assert code == 1 and err.count("::error title=distbench compare%3A ") == regressed > 5
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "no" / "such" / "dir" / "s.md"))
    code, _, err = cli(["compare", str(CLUSTER_A), str(slow), "--github"], capsys)
    assert code == 2 and err.count("\n") == 1 and "cannot append to $GITHUB_STEP_SUMMARY" in err


def test_an_annotation_is_one_line_whatever_the_path(tmp_path: Path) -> None:
    odd = slowed_copy(tmp_path / "50%\nnight,a:b", which=SLOWED)
    comparison = judged(CLUSTER_A, odd)
    lines = error_lines(comparison)
    assert len(lines) == len(comparison.regressions()) > 5
    assert all("\n" not in line and "\r" not in line for line in lines)
    assert all(unescape(line.split("::", 2)[2]).endswith(f"current {odd})") for line in lines)
