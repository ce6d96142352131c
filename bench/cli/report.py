"""`distbench report`: its options and the command (registered in app.py). Torch-free: the
report's modules are imported only when the command runs."""

from __future__ import annotations

from typing import Annotated

import typer

ReportRuns = Annotated[
    list[str],
    typer.Argument(
        help="Run directories, or folders of them (searched recursively).", metavar="RUN_DIR"
    ),
]
ReportOut = Annotated[
    str | None,
    typer.Option(
        "--out",
        help="Report folder; only files a report wrote there are replaced [default: "
        "RUN_DIR-report next to one argument, ./report for several; never inside an input].",
    ),
]
ReportBy = Annotated[
    str,
    typer.Option(
        "--by",
        help="Compare runs by argument (each folder given), label, host or run [default auto: "
        "the arguments when they share a case, else label, host, run; runs of different "
        "things merge].",
    ),
]


ReportMetric = Annotated[
    str,
    typer.Option(
        "--metric",
        help="The time runs are compared and judged on: p50, mean, min, max, p95 or p99 (as "
        "distbench compare --metric; ci/nightly.sh's gate judges min).",
    ),
]
ReportReference = Annotated[
    str | None,
    typer.Option(
        "--reference",
        help="TOML of expected busbw per primitive, size and world size: drawn dashed, with "
        "the gap in percent (docs: reference-values).",
        metavar="FILE",
    ),
]


def report(
    run_dirs: ReportRuns,
    out: ReportOut = None,
    by: ReportBy = "auto",
    reference: ReportReference = None,
    metric: ReportMetric = "p50",
) -> None:
    """Figures and tables from run directories: report.html (one self-contained page), report.md
    and PNGs; several runs (labels, hosts, clusters) are compared side by side.

    \b
    Examples:
      distbench report results/RUN
      distbench report results/cluster-a results/cluster-b
      distbench report results/RUN --reference expected.toml
      distbench report results/cluster-a results/cluster-b --metric min
    """
    from distbench.reports.report.page.build import build_report

    files = build_report(run_dirs, out, by, reference, metric=metric)
    print(
        f"report: {files.html} and {files.markdown.name}, {len(files.figures)} figures "
        f"({files.rows} rows)"
    )
