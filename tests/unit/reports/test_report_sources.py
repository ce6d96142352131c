"""How a report names its sources (reports/report/sources.py): a run without a --label is in
the source "unlabelled", as a headline reads it ("unlabelled and before-upgrade are one launch
each"); a new user's report said "(none) and before-upgrade ..."."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from distbench.reports.report.sources import NO_HOST, NO_LABEL, assign_sources, source_of


def test_runs_without_a_label_or_host_get_a_name_a_sentence_can_hold() -> None:
    rows = pd.DataFrame(
        {"label": ["", "before-upgrade", ""], "host": ["n1", "", "n2"], "run": ["a", "b", "c"]}
    )
    assert source_of(rows, "label", []).tolist() == ["unlabelled", "before-upgrade", "unlabelled"]
    assert source_of(rows, "host", []).tolist() == ["n1", "unknown host", "n2"]
    assert source_of(rows, "run", []).tolist() == ["a", "b", "c"]
    assert (NO_LABEL, NO_HOST) == ("unlabelled", "unknown host")


def test_a_night_of_launches_is_said_once_in_the_notes() -> None:
    """compare's `PATH: one night of 3 launches (...)` repeated the report's own `PATH: 3
    launches drawn as one run (...)` under "What could not be shown"."""
    from distbench.reports.report.verdicts import said

    own = ["results/n1: 3 launches drawn as one run (launch-1, launch-2, launch-3): in the figures"]
    assert said("results/n1: one night of 3 launches (launch-1, launch-2, launch-3)", own)
    assert not said("results/n2: one night of 3 launches (launch-1, launch-2, launch-3)", own)
    assert not said("results/n1: one night of 2 launches (launch-1, launch-2)", own)
    assert not said("results/n1: something else", own)


def test_the_start_up_table_lists_phases_in_the_order_they_happen() -> None:
    """A new user's Start-up table read destroy, first_collective, init (by name)."""
    from distbench.reports.report.sections.init import init_rows

    phases = ["destroy_process_group", "first_collective", "init_process_group", "new_groups"]
    comm = pd.DataFrame(
        {
            "primitive": "init", "pattern": [f"tcp:{p}" for p in phases], "run": "r",
            "world_size": 2, "time_us_p50": 1000.0,
        }
    )  # fmt: skip
    assert init_rows(comm)["phase"].tolist() == [
        "init_process_group", "first_collective", "new_groups", "destroy_process_group",
    ]  # fmt: skip


def test_two_labels_of_one_folder_are_not_a_run_against_itself(tmp_path: Path) -> None:
    """A new user's `distbench report FOLDER` of an unlabelled run and a `--label before-upgrade`
    run said "unlabelled and before-upgrade hold the same launches: a run against itself": a
    source that is no argument is read as one launch named after the source (reports/report/
    sides.py), which has no results.csv of its own, and compare knew every such launch by the
    digest of no file at all. `report A B` of the same two runs said nothing; the note is for
    sides that hold the same launches."""
    from distbench.reports.compare.judge import compare_sides
    from distbench.reports.compare.sides import launch_keys, load_side
    from distbench.reports.load import load_runs
    from distbench.reports.report.launch_frames import pool_launches
    from distbench.reports.report.verdicts import COMPARE, report_verdicts
    from tests.unit.reports.test_compare import comm_row, write_run

    itself = "hold the same launches: a run against itself"
    folder = tmp_path / "f"
    runs = (("a", "", 100.0), ("b", "before-upgrade", 101.0))
    for day, (name, label, level) in enumerate(runs, 1):
        times = [level + i for i in range(6)]
        run = write_run(folder / name, [(comm_row(4096, times, 0, label=label), times)])
        manifest = json.loads((run / "manifest.json").read_text())
        (run / "manifest.json").write_text(
            json.dumps({**manifest, "started_utc": f"2026-01-0{day}T00:00:00Z"})
        )
    for arguments in ([folder], [folder / "a", folder / "b"]):
        loaded = load_runs(arguments)
        pool_launches(loaded)
        by = assign_sources(loaded)
        notes: list[str] = []
        verdicts = report_verdicts(loaded, notes)
        assert len(verdicts) == 1 and by in ("label", "argument")
        assert not [n for n in notes if itself in n], (arguments, notes)
    assert launch_keys({}, tmp_path / "nowhere") == set()
    side = load_side(folder / "a")  # both sides the same launches: still said
    comparison = compare_sides(
        side, side, COMPARE.chosen_metric, COMPARE.thresholds, COMPARE.settings()
    )
    assert any(itself in n for n in comparison.notes)
