"""compare in CI (#29 item 3). The half that launches or runs for seconds; the in-process half, and
the file's whole story: tests/unit/reports/test_compare_ci.py."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from distbench.reports.compare.github import error_lines
from distbench.reports.compare.junit import render_junit
from distbench.reports.compare.render import render_json, render_markdown
from distbench.stats.verdict import IMPROVED, NO_CHANGE, REGRESSED
from tests.paths import ROOT as REPO
from tests.unit.reports.test_compare import launch, levels, night, window
from tests.unit.reports.test_compare_ci import (
    CLUSTER_A,
    case_outcome,
    check_junit,
    cli,
    judged,
    slowed_copy,
    unescape,
)

# ---- ci/nightly.sh: one writer ----------------------------------------------------------------


def test_the_nightly_summary_is_written_once_by_compare(tmp_path: Path) -> None:
    """ci/nightly.sh gating a run made elsewhere in a GitHub Actions job: the job summary holds
    compare's Markdown once (nightly.sh no longer appends its own copy) and stderr the
    annotations. No sweep: --run-dir, --no-report."""
    night_dir = slowed_copy(tmp_path / "night")
    summary = tmp_path / "summary.md"
    env = {**os.environ, "DISTBENCH": f"{sys.executable} -m distbench", "GITHUB_ACTIONS": "true",
           "GITHUB_STEP_SUMMARY": str(summary)}  # fmt: skip
    env.pop("DISTBENCH_BASELINES", None)
    result = subprocess.run(
        ["bash", str(REPO / "ci" / "nightly.sh"), "--run-dir", str(night_dir), "--baseline",
         str(CLUSTER_A), "--threshold", "5%", "--no-report"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    text = summary.read_text()
    assert text.count("### distbench compare: REGRESSION") == 1
    assert text == (night_dir / "compare.md").read_text().rstrip("\n") + "\n\n"
    assert result.stderr.count("::error title=distbench compare%3A ") >= 1


def test_junit_reads_every_state_and_a_missing_row(tmp_path: Path) -> None:
    """A window of five quiet nights against a night with broadcast slower and reduce faster:
    regressed, improved and no change seen (each pass saying what it could see); then a row of
    the baseline missing tonight fails the report, unless --allow-missing."""
    rng = random.Random(29)
    table = levels("all_reduce", "broadcast", "all_gather", "reduce")
    base = window(tmp_path, rng, 5, table)
    changed = {k: v * {"broadcast": 1.3, "reduce": 0.7}.get(k[0], 1.0) for k, v in table.items()}
    comparison = judged(base, night(tmp_path / "tonight", changed, rng))
    text, body = render_junit(comparison), json.loads(render_json(comparison))
    check_junit(text, body)
    states = {row["state"] for row in body["rows"]}
    assert body["exit_code"] == 1 and {REGRESSED, IMPROVED, NO_CHANGE} <= states
    passes = [c for c in ET.fromstring(text).iter("testcase") if case_outcome(c)[0] == "passed"]
    assert passes and all("would catch" in (c.findtext("system-out") or "") for c in passes)

    a = launch(tmp_path / "a", {("all_reduce", 1024): 50.0, ("all_reduce", 65536): 60.0}, rng)
    b = launch(tmp_path / "b", {("all_reduce", 65536): 60.0}, rng)
    for allow, exit_code, failures in ((False, 4, 1), (True, 0, 0)):
        comparison = judged(a, b, allow_missing=allow)
        text, body = render_junit(comparison), json.loads(render_json(comparison))
        assert body["exit_code"] == exit_code
        check_junit(text, body, allow_missing=allow)
        root = ET.fromstring(text)
        assert int(root.get("failures", -1)) == failures
        missing = root.find("testsuite[@name='distbench compare: not judged']/testcase")
        assert missing is not None
        assert (missing.get("name") or "").startswith("all_reduce 1K float32 n=2 ")
        node = missing.find("skipped" if allow else "failure")
        assert node is not None and node.get("message") == "only-baseline: not in the current run"
        titled = [line for line in error_lines(comparison) if "rows missing::" in line]
        assert len(titled) == (0 if allow else 1)  # the annotation of a lost case (exit 4)


def test_under_github_actions_compare_writes_the_summary_and_the_annotations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = slowed_copy(tmp_path / "slow")
    base = str(CLUSTER_A)
    comparison = judged(CLUSTER_A, slow)
    markdown, body = render_markdown(comparison), json.loads(render_json(comparison))
    regressed = [i for i in (*body["rows"], *body["bands"]) if i["state"] == REGRESSED]
    summary = tmp_path / "summary.md"
    summary.write_text("an earlier step's summary\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, table, err = cli(["compare", base, str(slow)], capsys)
    assert code == 1 and table.startswith("distbench compare: REGRESSION")  # stdout: the table
    assert summary.read_text() == "an earlier step's summary\n" + markdown + "\n\n"
    errors = [line for line in err.splitlines() if line.startswith("::error ")]
    # the 5 slowed rows and the bands over them (a band learns with its rows' df since 12-05)
    assert errors == err.splitlines() and len(errors) == len(regressed) > 5
    titles = {unescape(line.split("::")[1].removeprefix("error title=")) for line in errors}
    assert len(titles) == len(regressed) and all(t.endswith(" regressed") for t in titles)
    first = unescape(errors[0].split("::", 2)[2])
    assert first == body["verdicts"][0] + f" (time_us_p50; baseline {base}, current {slow})"
    # stdout is the chosen format, whole: JSON still parses with the annotations on
    code, out, err = cli(["compare", base, str(slow), "--format", "json"], capsys)
    assert json.loads(out)["regressed"] is True and err.count("::error ") == len(regressed)
    assert summary.read_text().count("### distbench compare: REGRESSION") == 2
    # --no-github: nothing; a pass: the summary and no annotation
    before = summary.read_text()
    assert cli(["compare", base, str(slow), "--no-github"], capsys)[2] == ""
    assert summary.read_text() == before
    code, _, err = cli(["compare", base, base], capsys)
    assert code == 0 and err == ""
    added = summary.read_text()[len(before) :]
    assert added.startswith(
        "### distbench compare: pass (20 cannot tell): nothing judged yet, no row could be told "
        "from the noise\n"
    )
