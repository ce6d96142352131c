"""`distbench export`: a run's rows in a format another tool reads (registered in app.py).
Torch-free; pandas and the formats (distbench.reports.export) are imported when it runs."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from distbench.parse import UsageError, parse_choice

ExportRunDir = Annotated[
    str,
    typer.Argument(help="A run directory, or a folder of them (a sweep).", metavar="RUN_DIR"),
]
ExportFormat = Annotated[
    str,
    typer.Option(
        "--format",
        help="nccl-tests-json (nccl-tests' -J file), openmetrics (Prometheus), bmf (Bencher) or "
        "gab (github-action-benchmark's customSmallerIsBetter).",
        metavar="FORMAT",
    ),
]
ExportOut = Annotated[
    str | None,
    typer.Option("--out", help="Write to this file (replaced) [default: standard output].",
                 metavar="FILE"),
]  # fmt: skip
ExportSampleTimestamps = Annotated[
    bool,
    typer.Option(
        "--sample-timestamps",
        help="openmetrics: every sample carries the run's end time (promtool backfill); off by "
        "default, as node_exporter's textfile collector and the Pushgateway refuse them.",
    ),
]


def export(
    run_dir: ExportRunDir,
    format: ExportFormat,
    out: ExportOut = None,
    sample_timestamps: ExportSampleTimestamps = False,
) -> None:
    """A run's communication rows as nccl-tests JSON, OpenMetrics text, Bencher's BMF or
    github-action-benchmark's JSON; each shape and how every field is filled: docs/exports.md.

    \b
    Examples:
      distbench export results/RUN --format nccl-tests-json --out RUN.json
      distbench export results/RUN --format openmetrics --out distbench.prom
      distbench export results/RUN --format bmf --out bmf.json
      distbench export results/RUN --format gab --out gab.json
    """
    from distbench.reports.export import FORMATS, export_run

    fmt = parse_choice(format, FORMATS, "--format")
    if sample_timestamps and fmt != "openmetrics":
        raise UsageError(f"--sample-timestamps is for --format openmetrics, not {fmt}")
    target = Path(out) if out is not None else None
    if target is not None:
        check_out(target)
    text, notes = export_run(Path(run_dir), fmt, sample_timestamps)
    for note in notes:
        print(f"export: {note}", file=sys.stderr)
    if target is None:
        sys.stdout.write(text)
        return
    write_whole(target, text)
    print(f"export: {fmt} of {run_dir} written to {target}")


def file_mode(target: Path) -> int:
    """The permission bits `target` has, else those a new file gets under this umask."""
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def check_out(target: Path) -> None:
    if target.is_dir():
        raise UsageError(f"--out {target} is a directory: give a file, e.g. {target}/run.json")
    if not target.parent.is_dir():
        raise UsageError(f"--out {target}: its folder {target.parent} does not exist")


def write_whole(target: Path, text: str) -> None:
    """Replace `target` at once (a reader, e.g. node_exporter, never sees half a file), with the
    mode a plain write gets (0666 less the umask; mkstemp's own is 0600, which node_exporter,
    running as another user, cannot read), or the mode of the file it replaces."""
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            os.fchmod(stream.fileno(), file_mode(target))
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
