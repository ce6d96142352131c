"""history.csv: every point of a history, a line each (reports/history/render.py writes it).

write_csv(csv_frame(history), Path("history/history.csv"))
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from distbench.reports.history.build import History

CSV_COLUMNS = (
    "run",
    "run_dir",
    "started_utc",
    "git_sha",
    "schema_version",
    "kind",
    "case",
    "metric",
    "value",
    "low",
    "high",
    "launches",
    "segment",
    "change_point",
    "verdict",
)
"""history.csv: one line per point. value: the night's geometric mean over its launches, low and
high its lowest and highest launch; change_point: regressed / improved at the first run of a new
level, else empty; segment: the part of the series since the last definition change; verdict:
its case's state over the verdicts' last runs (regressed, improved, no change seen, cannot
tell), on each of its points."""


def csv_frame(history: History) -> pd.DataFrame:
    runs, points = history.runs, history.points
    marks = {(cp.case, cp.metric, cp.position): cp.state for cp in history.change_points}
    marked = pd.Series([
        marks.get(key, "")
        for key in zip(points["case"], points["metric"], points["run"], strict=True)
    ], dtype="category") if marks else ""  # fmt: skip
    position = points["run"].to_numpy()
    states = {(v.case, v.metric): v.state for v in history.verdicts}
    verdict = pd.Series(
        [states.get(key, "") for key in zip(points["case"], points["metric"], strict=True)],
        dtype="category",
    )

    def per_run(values: list[str]) -> pd.Series:
        """Each point's run's value, as categories (a million strings, written in a second)."""
        codes, uniques = pd.factorize(np.array(values, dtype=object))
        kinds = pd.CategoricalDtype(list(uniques))
        return pd.Series(pd.Categorical.from_codes(np.asarray(codes)[position], dtype=kinds))

    return pd.DataFrame(
        {
            "run": per_run([r.name for r in runs]),
            "run_dir": per_run([r.path for r in runs]),
            "started_utc": per_run([r.started_utc for r in runs]),
            "git_sha": per_run([r.git_sha for r in runs]),
            "schema_version": points["schema_version"],
            "kind": points["kind"],
            "case": points["case"],
            "metric": points["metric"],
            "value": points["value"],
            "low": points["low"],
            "high": points["high"],
            "launches": points["launches"],
            "segment": points["segment"],
            "change_point": marked,
            "verdict": verdict,
        },
        columns=list(CSV_COLUMNS),
    )


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """DuckDB's CSV writer: a million points in about a second (pandas' takes ten)."""
    import duckdb

    connection = duckdb.connect()
    try:
        connection.register("points", frame)
        target = str(path).replace("'", "''")
        connection.execute(f"COPY points TO '{target}' (HEADER, DELIMITER ',')")
    finally:
        connection.close()
