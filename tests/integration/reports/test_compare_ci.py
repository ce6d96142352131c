"""compare in CI (#29 item 3): `--format junit` read back with xml.etree and held to compare's
own JSON on the same inputs (a regression turned into a pass must fail that check); the JSON's
version key; `--github` (or GITHUB_ACTIONS=true) appending the Markdown to the job summary and
printing one `::error` line per regressed verdict; ci/nightly.sh leaving the summary to compare.

The regression: a copy of the checked-in cluster-a all_reduce run (tests/data) whose world-size-2
throughput rows are made 1,000x slower, which one launch a side can call (the default spread
hides anything under ~10x); the other rows stay `cannot tell`. Windows of nights for the other
states come from test_compare.py's fixture runs (the real sinks)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.paths import ROOT as REPO
from tests.unit.reports.test_compare_ci import CLUSTER_A, slowed_copy

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
