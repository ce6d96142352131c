"""`distbench history --metric`: the series judged is the statistic asked for (the nightly gate
may judge p50 with compare --metric p50; history judged the fastest trial alone before), and a
name that is no time statistic is one line and exit 2."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import usage_error_line
from tests.paths import ROOT

NIGHTS, STEP_AT = 40, 20


def stepped_p50_history(out: Path) -> list[Path]:
    """Synthetic nights (ci/bench_history.py) whose p50 doubles from night STEP_AT on, every
    other column unchanged."""
    spec = importlib.util.spec_from_file_location("bench_history", ROOT / "ci" / "bench_history.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.build_history(out, NIGHTS, 4, None, seed=1)
    nights = sorted(out.iterdir())
    for night in nights[STEP_AT:]:
        path = night / "results.csv"
        with path.open(newline="") as f:
            rows = list(csv.DictReader(f))
        for row in rows:
            row["time_us_p50"] = str(2 * float(row["time_us_p50"]))
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
    return nights


@pytest.mark.parametrize("metric", ["p50", "median", "time_us_p50"])
def test_the_metric_asked_is_the_series_judged(
    metric: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from distbench.cli.app import run_cli

    nights = stepped_p50_history(tmp_path / "runs")
    base = ["history", *map(str, nights), "--cache", "off", "--absolute"]
    assert run_cli([*base, "--out", str(tmp_path / "min")]) == 0
    assert "each its fastest trial" in capsys.readouterr().out
    assert run_cli([*base, "--out", str(tmp_path / "p50"), "--metric", metric]) == 0
    assert "each its median (p50)" in capsys.readouterr().out
    median, fastest = (pd.read_csv(tmp_path / m / "history.csv") for m in ("p50", "min"))
    assert set(median["metric"]) == {"time_us_p50"} and set(fastest["metric"]) == {"time_us_min"}
    changes = (tmp_path / "p50" / "history.md").read_text()
    assert changes.count(f"nightly-{STEP_AT:04d}") >= 4, changes  # every case's p50 doubled
    assert f"nightly-{STEP_AT:04d}" not in (tmp_path / "min" / "history.md").read_text()


@pytest.mark.parametrize("metric", ["busbw", "time_us_std", "", "p42"])
def test_a_metric_that_is_no_time_statistic_is_one_line(
    metric: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = usage_error_line(["history", "a", "b", "--metric", metric], capsys)
    assert f"history --metric '{metric}' is not a time statistic: give min" in line, line


def test_the_cache_holds_every_statistic_and_gives_the_one_asked(tmp_path: Path) -> None:
    """A run is read once whatever --metric asks: a second metric comes from the cache, chosen
    in its query, and equals the uncached reading."""
    from distbench.reports.history.cache import PointCache, read_uncached
    from distbench.reports.history.load import metric_names

    nights = stepped_p50_history(tmp_path / "runs")[:3]
    with PointCache.open(tmp_path / "c.duckdb") as store:
        fastest = store.load(nights, metric_names("min"))[1]
    with PointCache.open(tmp_path / "c.duckdb") as store:
        assert store.unchanged(nights) == frozenset(nights)
        median = store.load(nights, metric_names("p50"))[1]
    assert set(fastest["metric"]) == {"time_us_min"} and set(median["metric"]) == {"time_us_p50"}
    plain = read_uncached(nights, metric_names("p50"))[1]
    columns = ["path", "key", "value"]
    ordered = [f[columns].astype(str).sort_values(columns).to_numpy() for f in (median, plain)]
    assert (ordered[0] == ordered[1]).all()


def test_a_statistic_no_run_recorded_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default runs are throughput rows, which record no p95: before, an IndexError."""
    nights = stepped_p50_history(tmp_path / "runs")[:4]
    argv = ["history", *map(str, nights), "--cache", "off", "--metric", "p95"]
    argv += ["--out", str(tmp_path / "h")]
    line = usage_error_line(argv, capsys)
    assert "history --metric p95: no run here recorded it" in line, line


def test_the_cli_and_the_loader_name_the_same_statistics() -> None:
    """bench/cli/history.py keeps its own copy (it imports no pandas): the two must agree."""
    from distbench.cli.history import STATS as CLI_STATS
    from distbench.reports.history.load import STATS

    assert CLI_STATS == STATS
