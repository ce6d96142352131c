"""compare's options are parsed where they are declared (reports/compare/options.py): the CLI
fills one CompareOptions whose fields are the objects compare uses, so nothing below it parses
text again. In-process: the option toolkit's parse_group is what typer calls per option."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from distbench.options.opt import options_of, parse_group
from distbench.parse import UsageError
from distbench.reports.compare.checks import METRICS, Check, RuleFile, Threshold
from distbench.reports.compare.options import FORMATS, CompareOptions
from distbench.reports.compare.render import RENDERERS
from distbench.reports.report.verdicts import COMPARE


def test_options_arrive_as_objects(tmp_path: Path) -> None:
    rules = tmp_path / "t.toml"
    rules.write_text('default = "7%"\n[[rules]]\nprimitive = "all_reduce"\nthreshold = "20us"\n')
    options = parse_group(
        CompareOptions,
        {
            "metric": "busbw",
            "threshold": "median:2%",
            "thresholds_file": str(rules),
            "alpha": "0.01",
            "min_nights": "3",
            "output_format": "JSON",
        },
    )
    assert options.metric is METRICS["busbw_GBps"]
    assert options.threshold == Check(METRICS["time_us_p50"], Threshold(2.0, True))
    assert options.chosen_metric is METRICS["time_us_p50"]  # METRIC:5% picks the metric
    assert isinstance(options.thresholds_file, RuleFile)
    thresholds = options.thresholds
    assert thresholds.default == Threshold(7.0, True)  # the file's default wins over --threshold
    assert thresholds.for_row({"primitive": "all_reduce"}) == Threshold(20.0, False, "us")
    assert (options.alpha, options.min_nights, options.output_format) == (0.01, 3, "json")
    settings = options.settings()
    assert (settings.alpha, settings.min_nights, settings.relative) == (0.01, 3, True)


def test_defaults_are_what_help_shows_parsed() -> None:
    """Each default is its --help text through the option's parser, so `compare A B` and a
    typed `--threshold 5%` judge alike; the report judges with these defaults too."""
    default = CompareOptions()
    for field in fields(CompareOptions):
        opt = options_of(CompareOptions)[field.name]
        if opt.parse is not None and getattr(default, field.name) is not None:
            shown = opt.default_text or str(getattr(default, field.name))
            assert parse_group(CompareOptions, {field.name: shown}) == default, field.name
    assert default.threshold == Check(None, Threshold(5.0, True))
    assert default.chosen_metric is METRICS["time_us_p50"]
    assert default.thresholds.default == Threshold(5.0, True) and not default.thresholds.rules
    assert default == COMPARE
    assert tuple(RENDERERS) == FORMATS


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("threshold", "10", "has no unit"),
        ("threshold", "lots", "not a threshold"),
        ("metric", "nope", "unknown metric 'nope'"),
        ("alpha", "1.5", "probability between 0 and 1"),
        ("min_nights", "0", "from 1 to 365"),
        ("output_format", "xml", "unknown format 'xml'"),
        ("thresholds_file", "/no/such.toml", "cannot read the thresholds file"),
        ("thresholds_file", "bad\0name", "cannot read the thresholds file"),
    ],
)
def test_bad_text_is_one_line(name: str, text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message) as error:
        parse_group(CompareOptions, {name: text})
    assert "\n" not in str(error.value)
