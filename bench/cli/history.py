"""`distbench history`: nightly runs as time series, with change points. Its options
(HistoryOptions), parsed here without pandas or torch; the work is in distbench.reports.history,
imported when the command runs."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Annotated

import typer

from distbench.options.opt import flag, integer, text, with_groups
from distbench.parse import UsageError


def parse_min_change(value: str) -> float:
    """'5%' -> 0.05: the smallest step reported, a percentage above 0 and below 100."""
    hint = "give a percentage, e.g. --min-change 5%"
    number = value.strip().removesuffix("%")
    try:
        percent = float(number)
    except ValueError:
        raise UsageError(f"--min-change '{value}' is not a percentage: {hint}") from None
    if not value.strip().endswith("%") or not 0 < percent < 100:
        raise UsageError(
            f"--min-change '{value}' is not a percentage above 0 and below 100: {hint}"
        )
    return percent / 100.0


def parse_cache(value: str) -> str:
    """'off', or a file for the DuckDB cache (not a directory)."""
    from pathlib import Path

    if value.strip() == "":
        raise UsageError(
            "--cache '' names no file: give a file, e.g. --cache history.duckdb, or off"
        )
    if value != "off" and Path(value).is_dir():
        raise UsageError(f"--cache '{value}' is a directory: give a file in it, or off")
    return value


METRIC_WORDS = {"median": "p50", "fastest": "min", "slowest": "max"}
"""Other names --metric takes for a statistic (as compare's --metric: median is p50)."""
STATS = ("min", "p50", "mean", "max", "p95", "p99")
"""history's statistics (reports/history/load.py STATS: this module imports no pandas)."""


def parse_metric(value: str) -> str:
    """'p50', 'median', 'time_us_p50' or 'step_time_us_p50' -> 'p50': the time statistic judged."""
    word = value.strip().lower()
    for prefix in ("step_time_us_", "time_us_"):
        word = word.removeprefix(prefix)
    word = METRIC_WORDS.get(word, word)
    if word not in STATS:
        raise UsageError(
            f"history --metric '{value}' is not a time statistic: give min (the default, the "
            "nightly gate's), p50, mean, max, p95 or p99"
        )
    return word


def parse_glob(value: str) -> str:
    if value.strip() == "":
        raise UsageError(
            "--glob '' matches nothing: give a pattern, e.g. --glob 'results/nightly-*'"
        )
    return value


@dataclass(frozen=True)
class HistoryOptions:
    """history's options; reports.history.HistoryArgs takes them with the run directories."""

    glob: Annotated[
        str | None,
        text(
            "Runs whose directories match this pattern (quote it), instead of RUN_DIR.", parse_glob
        ),
    ] = None
    out: Annotated[str, text("Folder for history.html, history.md and history.csv.")] = "history"
    fail_on_regression: Annotated[
        int | None,
        integer("Exit 1 when a case regressed within the last N runs (verdicts: last N, else 7)."),
    ] = None
    min_change: Annotated[
        float,
        text(
            "Smallest step reported, in percent of the level before it.",
            parse_min_change,
            default_text="5%",
        ),
    ] = 0.05
    cache: Annotated[
        str | None,
        text(
            "DuckDB file caching each run's points, or off "
            "[default: $XDG_CACHE_HOME/distbench/history.duckdb].",
            parse_cache,
        ),
    ] = None
    """None: the default file (no text for the parser to read, which refuses '')."""
    metric: Annotated[
        str,
        text(
            "The time each case is judged on: min (the fastest trial, as ci/nightly.sh's gate "
            "judges), p50, mean, max, p95 or p99; as compare's --metric takes them.",
            parse_metric,
            default_text="min",
        ),
    ] = "min"
    relative: Annotated[
        bool,
        flag(
            "Judge each case beyond the rest of its run (the run's common level taken out "
            "night by night; what moves every primitive alike is the series 'whole run'); "
            "--absolute judges every case on its own level.",
            "--relative/--absolute",
        ),
    ] = True


@with_groups(options=HistoryOptions)
def history(
    run_dirs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Run directories, one per night (a sweep's folder is one run).", metavar="RUN_DIR"
        ),
    ] = None,
    options: HistoryOptions = HistoryOptions(),
) -> None:
    """Many runs as time series: each case's fastest trial (or --metric) by night, the change
    points where a level stepped and stayed, and each case's verdict over the last runs
    (regressed, improved, no change seen, cannot tell). Exit 1 with --fail-on-regression N when
    a case regressed within the last N runs, 2 bad input.

    \b
    Examples:
      distbench history --glob 'results/nightly-*'
      distbench history --glob 'results/nightly-*' --fail-on-regression 3
      distbench history --glob 'results/nightly-*' --absolute
      distbench history --glob 'results/nightly-*' --metric p50
    """
    from distbench.reports.history.build import HistoryArgs, run_history

    typed = {f.name: getattr(options, f.name) for f in fields(options)}
    code, output = run_history(HistoryArgs(run_dirs=tuple(run_dirs or ()), **typed))
    print(output)
    raise typer.Exit(code)
