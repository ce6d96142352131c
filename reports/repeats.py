"""One rule for a case measured more than once, in compare and in report: the row of the run that
started last is used (manifest started_utc, then the run's path; within one results.csv, the later
row), and a note names the runs involved. Taking the latest measurement is what a resumed or
re-run case means; pooling or a median would mix measurements the user replaced. (A nightly's
launch-N folders are not replacements but repeats on purpose: compare judges each launch,
reports/compare/sides.py, and the report draws them as one run, reports/report/launch_frames.py.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from distbench.collectors.schema import COMM_MATCH_KEY, DDP_MATCH_KEY
from distbench.reports.load import Loaded


def run_order(manifest: dict[str, Any] | None, path: Path) -> str:
    """Sort key of a run: its start time, then its path (so runs without a manifest still sort)."""
    return f"{(manifest or {}).get('started_utc') or ''}\0{path}"


def keep_last_repeats(
    frame: pd.DataFrame, key: list[str], order: dict[str, str], what: str
) -> tuple[pd.DataFrame, str | None]:
    """The rows of `frame` (a `run` column, and `source` in `key`) with each key once, from the
    run that started last (`order`: run name -> run_order); the note names the runs."""
    if not len(frame):
        return frame, None
    position = frame["run"].map(order).fillna("")
    ranked = frame.assign(_order=position).sort_values("_order", kind="stable")
    repeated = ranked.duplicated(key, keep=False)
    if not repeated.any():
        return frame, None
    kept = ranked[~ranked.duplicated(key, keep="last")]
    runs = ranked.loc[repeated].drop_duplicates("run")["run"].astype(str).tolist()
    dropped = len(frame) - len(kept)
    if len(runs) == 1:  # within one results.csv: a pairs confirmation
        note = (
            f"{dropped} {what} row(s) of run {runs[0]} measure a case again later in the same "
            "run (pairs: an outlier's pairs, measured again to confirm it): the later row is "
            "shown"
        )
    else:
        note = (
            f"{dropped} {what} row(s) repeat a case of the same source in runs {', '.join(runs)} "
            f"(by start time): each case is shown from the run that started last, as compare "
            "does (a run's launch-N folders are pooled instead)"
        )
    return kept.drop(columns="_order").sort_index(), note


def keep_one_row_per_case(loaded: Loaded) -> None:
    """report's side of the rule, once sources are assigned: one row per source and case, from
    the run that started last; a note in `loaded.notes` names the runs."""
    order = {run.name: run_order(run.manifest, run.path) for run in loaded.runs}
    comm_key = ["source", *COMM_MATCH_KEY]
    loaded.comm, comm_note = keep_last_repeats(loaded.comm, comm_key, order, "communication")
    ddp_key = ["source", *DDP_MATCH_KEY]
    loaded.ddp, ddp_note = keep_last_repeats(loaded.ddp, ddp_key, order, "DDP")
    loaded.notes += [note for note in (comm_note, ddp_note) if note]
