"""The report's "What ran" table for a night of several launches drawn as one run: it showed the
last launch's start and command as the night's (a new user's three-launch nights read as if one
launch ran)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from distbench.reports.load import RunData
from distbench.reports.report.page.build import manifest_fields


def launch(n: int, started: str, status: str = "completed") -> dict[str, object]:
    out = f"results/nightly-1/launch-{n}"
    command = ["distbench", "sweep", "--config", "ci/sweep-nightly-cpu.toml", "--out", out]
    return {"started_utc": started, "command": command, "status": status}


def night(*manifests: dict[str, object]) -> RunData:
    rows = pd.DataFrame({"label": [""]})
    return RunData(Path("results/nightly-1"), "nightly-1", 0, "comm", rows, None,
                   manifests[-1], launch_manifests=manifests)  # fmt: skip


def test_a_night_of_launches_shows_each_launchs_start_and_one_command() -> None:
    fields = manifest_fields(
        night(launch(1, "T00:45:03Z"), launch(2, "T00:45:27Z"), launch(3, "T00:45:50Z"))
    )
    assert fields["started (UTC)"] == "T00:45:03Z to T00:45:50Z (3 launches)"
    assert fields["command"] == (
        "distbench sweep --config ci/sweep-nightly-cpu.toml --out results/nightly-1/launch-N "
        "(N = 1 to 3)"
    )
    assert fields["status"] == "completed"


def test_a_launch_without_rows_leaves_a_gap_in_the_numbers() -> None:
    run = night(launch(1, "T1"), launch(2, "T2"), launch(4, "T4"))
    run = RunData(run.path, run.name, 0, "comm", run.rows, None, run.manifest,
                  launch_manifests=run.launch_manifests, launch_numbers=(1, 2, 4))  # fmt: skip
    assert manifest_fields(run)["command"].endswith("/launch-N (N = 1, 2, 4)")


def test_launches_that_differ_are_named_each() -> None:
    second = launch(2, "T2", status="interrupted")
    second["command"] = ["distbench", "allreduce"]
    fields = manifest_fields(night(launch(1, "T1"), second))
    assert fields["status"] == "launch-1: completed; launch-2: interrupted"
    assert fields["command"].startswith("launch-1: distbench sweep") and (
        fields["command"].endswith("; launch-2: distbench allreduce")
    )


def test_a_run_of_its_own_is_shown_as_its_manifest_says() -> None:
    one = launch(1, "T1")
    rows = pd.DataFrame({"label": [""]})
    fields = manifest_fields(RunData(Path("r"), "r", 0, "comm", rows, None, one))
    assert fields["started (UTC)"] == "T1" and fields["command"].endswith("launch-1")
