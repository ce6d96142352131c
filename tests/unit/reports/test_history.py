"""`distbench history` (reports/history*.py, bench/cli/history.py): change points in synthetic
nightly histories whose noise is this machine's (trials of real launches, tests/data/
gate-launches.json, resampled per night by ci/bench_history.py), the verdicts' states, the frozen
v1 runs, a series cut where a column changed meaning, the cache, and one line with exit 2 for bad
input to every option. The method's own checks, on pure functions: test_history_changepoint.py.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest

from tests.conftest import usage_error_line
from tests.paths import DATA, ROOT

NIGHTS, STEP_AT = 60, 40


def bench_history() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_history", ROOT / "ci" / "bench_history.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_history"] = module
    spec.loader.exec_module(module)
    return module


def history(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    from distbench.cli.app import run_cli

    code = run_cli(["history", *argv])
    return code, capsys.readouterr().out


def resolvable(points: pd.DataFrame) -> list[str]:
    """Cases whose night-to-night spread before the step (sd of the log fastest trial) is below
    0.07: a 20 % step (0.18 in log) is then at least 2.6 sd. (The sd, not a robust one: a night
    that resampled none of a launch's fast trials is an outlier that the test must live with.)"""
    before = points[(points["metric"] == "time_us_min") & (points["run_index"] < STEP_AT)]
    spread = before.groupby("case")["value"].agg(lambda v: float(v.map(math.log).std()))
    return sorted(spread[spread < 0.07].index)


def read_csv(out: Path) -> pd.DataFrame:
    frame = pd.read_csv(out / "history.csv", keep_default_na=False)
    runs = sorted(frame["run"].unique())
    return frame.assign(run_index=frame["run"].map({r: i for i, r in enumerate(runs)}))


def upgraded_copy(source: Path, target: Path, started: str) -> None:
    """The frozen v1 run rewritten as the current schema writes it (columns upgraded by the
    report's loader), started later: DDP step times changed meaning in v2, comm time_us_min
    never did."""
    from distbench.collectors.schema import SCHEMA_VERSION
    from distbench.reports.load import read_results_text

    target.mkdir(parents=True)
    _, frame = read_results_text(source)
    frame.to_csv(target / "results.csv", index=False, lineterminator="\n")
    manifest = json.loads((source / "manifest.json").read_text())
    manifest.update(schema_version=SCHEMA_VERSION, started_utc=started)
    (target / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--glob", ""], "--glob '' matches nothing"),
        (["--glob", "/nonexistent/nightly-*"], "matches no directory"),
        (["--fail-on-regression", "0"], "--fail-on-regression must be at least 1"),
        (["--fail-on-regression", "x"], "not a whole number"),
        (["--min-change", "0%"], "above 0 and below 100"),
        (["--min-change", "5"], "above 0 and below 100"),
        (["--min-change", "abc"], "is not a percentage"),
        (["--cache", ""], "names no file"),
        (["--cache", "DIR"], "is a directory"),
        (["--out", "FILE"], "is a file"),
        ([], "at least two runs"),
        (["RUN"], "at least two runs"),
        (["RUN", "/nonexistent"], "/nonexistent is not a run directory"),
        (["/nonexistent"], "/nonexistent is not a run directory"),  # not "at least two runs"
        (["RUN", "EMPTY"], "holds no results.csv"),
        (["RUN", "RUN2", "--glob", "x*"], "not both (the shell expands an unquoted pattern"),
        (["--glob", "no-such-results/nightly-*"], "matches no directory under /"),
        (["--glob", "no-such-results/nightly-*"], "run history where the nights are"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "FILE").write_text("")
    (tmp_path / "EMPTY").mkdir()
    names = {
        "RUN": str(DATA / "cluster-a"),
        "RUN2": str(DATA / "cluster-b"),
        "DIR": str(tmp_path),
        "FILE": str(tmp_path / "FILE"),
        "EMPTY": str(tmp_path / "EMPTY"),
    }
    full = ["history", *(names.get(a, a) for a in argv)]
    if "--out" not in full:
        full += ["--out", str(tmp_path / "h")]
    if "--cache" not in full:
        full += ["--cache", "off"]
    if argv[:1] not in (["RUN"], ["/nonexistent"]) and "--glob" not in argv and argv[:1] != []:
        full[1:1] = [str(DATA / "cluster-a"), str(DATA / "cluster-b")]
    assert says in usage_error_line(full, capsys)
