"""How a report names its sources (reports/report/sources.py): a run without a --label is in
the source "unlabelled", as a headline reads it ("unlabelled and before-upgrade are one launch
each"); a new user's report said "(none) and before-upgrade ..."."""

from __future__ import annotations

import pandas as pd

from distbench.reports.report.sources import NO_HOST, NO_LABEL, source_of


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
