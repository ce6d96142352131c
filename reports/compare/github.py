"""compare in a GitHub Actions job (--github, on by itself when GITHUB_ACTIONS is true): the
Markdown verdict appended to the job summary ($GITHUB_STEP_SUMMARY, when set) and one `::error`
workflow command per regressed verdict, so a failed gate shows what regressed on the run's page.

    ::error title=distbench compare%3A all_reduce >= 1M regressed::regressed: all_reduce >= 1M: ...

The annotations go to stderr: the runner reads workflow commands on stdout and stderr alike, and
stdout stays the chosen --format (JSON or JUnit redirected to a file stays valid). Escaping is
the runner's (actions/toolkit's command.ts): in the message % CR LF become %25 %0D %0A; in a
property (title=) : and , also become %3A and %2C.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from distbench.parse import UsageError
from distbench.reports.compare.judge import Comparison
from distbench.reports.compare.render import box_line, missing_line, render_markdown
from distbench.reports.compare.words import band_name, headline_verdicts, verdict_line
from distbench.stats.verdict import REGRESSED, Judged

SUMMARY = "GITHUB_STEP_SUMMARY"


def escape_data(text: str) -> str:
    """A workflow command's message: % first, so that an escape is never escaped twice."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (title=...)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def error_command(title: str, message: str) -> str:
    return f"::error title={escape_property(title)}::{escape_data(message)}"


def regressed_in_order(comparison: Comparison) -> list[Judged]:
    """Every regressed verdict once, the one naming each primitive's regression best first (the
    headline's), then the other bands, then the rows: GitHub shows a step's first few."""
    headline = [j for j in headline_verdicts(comparison) if j.state == REGRESSED]
    first = {id(j) for j in headline}
    outcome = comparison.outcome
    rest = [j for j in (*outcome.bands, *outcome.rows) if j.state == REGRESSED]
    return [*headline, *(j for j in rest if id(j) not in first)]


def error_lines(comparison: Comparison) -> list[str]:
    """One `::error` line per regressed row or band, and one for rows of the baseline missing
    tonight when they fail the gate (exit 4), and one when the night cannot tell (exit 5)."""
    sides = (
        f" ({comparison.metric.name}; baseline {comparison.baseline.path}, current "
        f"{comparison.current.path})"
    )
    lines = [
        error_command(
            f"distbench compare: {band_name(judged)} regressed",
            verdict_line(comparison, judged) + sides,
        )
        for judged in regressed_in_order(comparison)
    ]
    missing = missing_line(comparison)
    if missing is not None and not comparison.allow_missing:
        lines.append(error_command("distbench compare: rows missing", missing + sides))
    if comparison.outcome.box:
        reason = box_line(comparison.outcome.box)
        lines.append(error_command("distbench compare: cannot tell", reason + sides))
    return lines


def append_summary(comparison: Comparison, environ: Mapping[str, str]) -> Path | None:
    """Append the Markdown verdict to $GITHUB_STEP_SUMMARY; None when it is not set."""
    name = environ.get(SUMMARY, "")
    if not name:
        return None
    path = Path(name)
    try:
        with path.open("a", encoding="utf-8") as summary:
            summary.write(render_markdown(comparison) + "\n\n")
    except OSError as error:
        raise UsageError(f"cannot append to ${SUMMARY} {path}: {error.strerror}") from None
    return path


def publish(
    comparison: Comparison, environ: Mapping[str, str] = os.environ, stream: TextIO | None = None
) -> None:
    """The job summary, then the annotations (stderr unless `stream` is given)."""
    append_summary(comparison, environ)
    out = stream if stream is not None else sys.stderr
    for line in error_lines(comparison):
        print(line, file=out)
