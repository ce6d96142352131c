"""`distbench export RUN --format F`: a run's communication rows in the formats the field already
reads. One module per format, each a pure function of the loaded run (rows.py) to text:

    nccl_tests.py   nccl-tests' own -J JSON (JSON_FILE_VERSION 3)
    openmetrics.py  OpenMetrics text (Prometheus textfile collector, Pushgateway, promtool)
    bmf.py          the Bencher Metric Format
    gab.py          github-action-benchmark's customSmallerIsBetter list

docs/exports.md documents each shape and how every field is filled.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from distbench.reports.export.bmf import render_bmf
from distbench.reports.export.gab import render_gab
from distbench.reports.export.nccl_tests import render_nccl_tests
from distbench.reports.export.openmetrics import render_openmetrics
from distbench.reports.export.rows import ExportRun, load_export_run

RENDERERS: dict[str, Callable[[ExportRun], str]] = {
    "nccl-tests-json": render_nccl_tests,
    "openmetrics": render_openmetrics,
    "bmf": render_bmf,
    "gab": render_gab,
}
"""--format -> the function that writes it."""


FORMATS = tuple(RENDERERS)


def export_run(path: Path, fmt: str, sample_timestamps: bool = False) -> tuple[str, list[str]]:
    """The run at `path` in format `fmt` (one of FORMATS): (the text, notes on what was left
    out). `sample_timestamps`: OpenMetrics samples carry the run's end time."""
    run = load_export_run(path)
    if fmt == "openmetrics":
        return render_openmetrics(run, sample_timestamps), run.notes
    return RENDERERS[fmt](run), run.notes
