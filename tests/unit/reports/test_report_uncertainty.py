"""The report's verdicts and speedup intervals come from compare's own comparison (#25 item 6,
reports/report/verdicts.py): the launch is the unit, so a shift common to a launch is noise, not a
finding. Behaviour only; how often the intervals cover belongs to the benchmark (ci/bench_stats).

- a box compared with itself, its launches 5 % apart, is never called slower (0.2.0 headlined
  "slower (0.86-0.98x)" in 17 of 30 such reports); one launch a source says that cluster and
  launch cannot be told apart;
- a real 25 % slowdown with several launches a side is called regressed (slower);
- report and compare give the same state on every common row: canned launches, the frozen
  fixtures (tests/data), and real gloo runs;
- the summary's "every size" is the geometric mean over every size of a case (0.2.0's "geo. mean
  of those" averaged only the sizes already called, and overstated a change of one size).

Launches are written with the real sinks by tests/unit/reports/test_compare.py's helpers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from distbench.reports.compare.checks import parse_metric
from distbench.reports.compare.cli import run_compare
from distbench.reports.compare.options import CompareOptions
from distbench.reports.kinds import MATCH_KEYS
from distbench.reports.load import load_runs
from distbench.reports.repeats import keep_one_row_per_case
from distbench.reports.report import speedups as sp
from distbench.reports.report.launch_frames import pool_launches
from distbench.reports.report.sources import assign_sources
from distbench.reports.report.verdicts import annotate, report_verdicts


def report_rows(paths: list[Path], metric: str = "time_us_p50") -> tuple[pd.DataFrame, dict]:
    """Every compared row of a report of `paths` with its verdict, as build_report makes them
    (sections/compare.py section_compare), and the verdicts per source."""
    loaded = load_runs(paths)
    pool_launches(loaded)
    assign_sources(loaded)
    keep_one_row_per_case(loaded)
    notes: list[str] = []
    judged = parse_metric(metric)
    verdicts = report_verdicts(loaded, notes, judged)
    frames = []
    if len(loaded.comm):
        ratios = sp.comm_ratios(loaded.comm, str(judged.comm_column))
        frames.append(annotate(ratios, "comm", verdicts, judged).assign(kind="comm"))
    if len(loaded.ddp):
        ratios = sp.ddp_ratios(loaded.ddp, str(judged.ddp_column))
        frames.append(annotate(ratios, "ddp", verdicts, judged).assign(kind="ddp"))
    return pd.concat([f for f in frames if len(f)], ignore_index=True), verdicts


def cell(value: object) -> str:
    """A report cell (or compare's JSON key cell) as results.csv spells it."""
    if isinstance(value, float):
        return "" if math.isnan(value) else str(int(value)) if value.is_integer() else str(value)
    return str(value)


def compare_states(
    base: Path, current: Path, metric: str = "time_us_p50"
) -> dict[tuple[tuple[str, str], ...], str]:
    """compare's state of every judged row, as `distbench compare BASE CURRENT --format json
    [--metric M]` prints it, by the row's key (kind and its match key, as text)."""
    options = CompareOptions(output_format="json", metric=parse_metric(metric))
    _code, text = run_compare(str(base), str(current), options)
    return {
        tuple((c, cell(row[c])) for c in ("kind", *MATCH_KEYS[row["kind"]])): row["state"]
        for row in json.loads(text)["rows"]
    }


def assert_report_equals_compare(
    base: Path, current: Path, metric: str = "time_us_p50"
) -> pd.DataFrame:
    """Every row of the report that compare judged has compare's state (and there are such
    rows; each report row found by its own cells), both on `metric`."""
    rows, _verdicts = report_rows([base, current], metric)
    compared = compare_states(base, current, metric)
    common = []
    for record in rows.to_dict(orient="records"):
        key = (
            ("kind", record["kind"]),
            *((c, cell(record[c])) for c in MATCH_KEYS[record["kind"]]),
        )
        if key in compared:
            assert record["state"] == compared[key], (key, record["verdict"], compared[key])
            common.append(record)
        else:
            assert record["state"] == "not compared", key
    assert common
    return pd.DataFrame(common)
