"""compare's options, declared once and parsed where they are declared: the CLI (bench/cli/
compare.py) fills CompareOptions, each field already the object compare uses (a Metric, a Check
with its Threshold, a RuleFile, a float, an int), and run_compare (cli.py) takes it as it is.

    options = parse_group(CompareOptions, {"threshold": "busbw:10%", "alpha": "0.01"})

Bad text is one line and exit 2 (distbench.parse.UsageError, through the option's parser).
Imported by the CLI at start-up: no pandas, numpy or torch here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from distbench.options.opt import Opt, flag, text
from distbench.parse import UsageError, parse_choice
from distbench.reports.compare.checks import (
    METRICS,
    Check,
    Metric,
    RuleFile,
    Threshold,
    Thresholds,
    parse_check,
    parse_metric,
    read_rules,
)

if TYPE_CHECKING:
    from distbench.stats.engine import Settings

FORMATS = ("table", "markdown", "json", "junit")
"""--format's choices (render.RENDERERS renders each)."""


def parse_alpha(value: str) -> float:
    try:
        alpha = float(value)
    except ValueError:
        alpha = -1.0
    if not 0 < alpha < 1:
        raise UsageError(f"--alpha '{value}' must be a probability between 0 and 1, e.g. 0.05")
    return alpha


def parse_min_nights(value: str) -> int:
    text = value.strip()
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 365:
        raise UsageError(f"--min-nights '{value}' must be a number of nights from 1 to 365, e.g. 5")
    return int(text)


def parse_format(value: str) -> str:
    return parse_choice(value, FORMATS, "format")


DEFAULT_CHECK = Check(None, Threshold(5.0, True))
"""--threshold's default, 5% of the baseline (the metric: --metric's)."""
STORE = text("Baseline folder [default: $DISTBENCH_BASELINES, else ./baselines].")


@dataclass(frozen=True)
class CompareOptions:
    """`distbench compare`'s options, parsed (the two sides are its arguments)."""

    metric: Annotated[
        Metric,
        text(
            "time_us_p50 (median), time_us_mean/min/max/p95/p99, busbw_GBps, algbw_GBps, "
            "samples_per_s (DDP).",
            parse_metric,
            default_text="time_us_p50",
        ),
    ] = METRICS["time_us_p50"]
    threshold: Annotated[
        Check,
        text(
            "The floor a change must pass as well as the noise: 5% (of the baseline) or an "
            "amount with its unit (20us, 2GB/s); METRIC:5% also picks the metric (median:5%).",
            parse_check,
            default_text="5%",
        ),
    ] = DEFAULT_CHECK
    thresholds_file: Annotated[
        RuleFile | None,
        text("TOML file of per-primitive / size-band thresholds.", read_rules, "--thresholds"),
    ] = None
    alpha: Annotated[
        float,
        text(
            "The q of Benjamini and Hochberg over every row and band: the false discovery rate, "
            "and the chance of any false alarm when nothing changed, if launches are independent "
            "draws of one noise (on a shared box they are not: docs/gate.md gives the rates "
            "measured).",
            parse_alpha,
        ),
    ] = 0.05
    output_format: Annotated[
        str,
        text(
            "table, markdown (CI job summaries), json or junit (JUnit XML for GitLab, Jenkins).",
            parse_format,
            "--format",
        ),
    ] = "table"
    store: Annotated[str | None, STORE] = None
    save: Annotated[
        tuple[str, ...],
        Opt(
            "Also write the verdict to FILE (.md markdown, .json, .xml JUnit, else table); "
            "repeatable.",
            cli_type=list[str],
            decls=("--save",),
        ),
    ] = ()
    min_nights: Annotated[
        int,
        text(
            "Nights a baseline window must hold before its noise is known; until then rows "
            "within the default spread are 'cannot tell'.",
            parse_min_nights,
        ),
    ] = 5
    relative: Annotated[
        bool,
        flag(
            "Judge each primitive beyond the rest of the run (a shift of the whole box is one "
            "hypothesis of its own); --absolute judges every row on its own level.",
            "--relative/--absolute",
        ),
    ] = True
    github: Annotated[
        bool | None,
        flag(
            "Append the Markdown to $GITHUB_STEP_SUMMARY (when set) and print a GitHub "
            "'::error' annotation per regressed row or band [default: on when GITHUB_ACTIONS "
            "is true].",
            "--github/--no-github",
        ),
    ] = None
    allow_missing: Annotated[
        bool,
        flag(
            "Rows of the baseline missing from the current run do not fail (else exit 4).",
            "--allow-missing",
        ),
    ] = False

    @property
    def chosen_metric(self) -> Metric:
        """The metric judged: --threshold's (METRIC:5%), else --metric."""
        return self.threshold.metric or self.metric

    @property
    def thresholds(self) -> Thresholds:
        """Each row's floor: the thresholds file's rules, else --threshold's."""
        default = self.threshold.threshold
        rules = self.thresholds_file
        return rules.thresholds(default) if rules is not None else Thresholds(default)

    def github_wanted(self, environ: Mapping[str, str] = os.environ) -> bool:
        """--github, --no-github, else whether this runs in a GitHub Actions job."""
        if self.github is not None:
            return self.github
        return environ.get("GITHUB_ACTIONS", "") == "true"

    def settings(self) -> Settings:
        """The statistical core's settings (numpy: imported when compare runs)."""
        from distbench.stats.engine import Settings

        return Settings(alpha=self.alpha, min_nights=self.min_nights, relative=self.relative)
