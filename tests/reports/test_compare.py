"""distbench compare / baseline: checks and thresholds, verdicts on fixture runs written with the
real sinks, exit codes, the baseline store and ci/nightly.sh. The rank test itself: test_noise.py;
the decision rule's levers and the verdict-first output: test_gate_rule.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

from distbench.cli.app import run_cli
from distbench.collectors.manifest import write_manifest
from distbench.collectors.schema import (
    MANIFEST_JSON,
    MAX_OVER_RANKS,
    RESULTS_CSV,
    SAMPLES_CSV,
    SCHEMA_VERSION,
    DdpRow,
    ResultRow,
    SampleRow,
)
from distbench.collectors.sink import CsvSink
from distbench.parse import UsageError
from distbench.reports.checks import (
    METRICS,
    Threshold,
    Thresholds,
    load_thresholds,
    parse_check,
    parse_metric,
    parse_threshold,
)
from distbench.reports.compare import (
    IMPROVED,
    NOISE,
    ONLY_BASELINE,
    ONLY_CURRENT,
    REGRESSED,
    UNCHANGED,
    GateRule,
    compare_runs,
)
from distbench.reports.runs import load_run
from distbench.stats import Stats, algbw_gbps

REPO = Path(__file__).resolve().parents[2]

SEPARATED = [100.0, 101.0, 102.0, 103.0, 104.0]
SEPARATED_SLOWER = [120.0, 121.0, 122.0, 123.0, 125.0]  # +20 %, no overlap
WIDE = [60.0, 80.0, 100.0, 120.0, 140.0]
WIDE_SLOWER = [x * 1.2 for x in WIDE]  # the same +20 % shift, overlapping


# ---- fixture runs -----------------------------------------------------------------------------


def comm_row(size: int, samples: list[float], index: int, **changes: object) -> ResultRow:
    stats = Stats(tuple(samples))
    algbw = algbw_gbps(size, stats.p50)
    row = ResultRow(
        run_id="run", label="", host="h", measurement=f"ws2/i{index}", primitive="all_reduce",
        backend="gloo", device="cpu", world_size=2, nnodes=1, ranks="0-1", dtype="float32",
        op="sum", size_bytes=size, requested_bytes=size, count=size // 4, root="", src="",
        dst="", pattern="", mode="throughput", timer="perf_counter", iters=20, warmup=5,
        trials=len(samples), samples=len(samples), **stats.as_columns(), algbw_GBps=algbw,
        busbw_GBps=algbw, busbw_factor=1.0, wrong=-1,
    )  # fmt: skip
    return replace(row, **changes)


def ddp_row(strategy: str, samples: list[float], index: int) -> DdpRow:
    """A DDP row whose samples are windows (schema v2); columns the schema lacks are left out."""
    stats = Stats(tuple(samples))
    values: dict[str, object] = dict(
        run_id="run", label="", host="h", measurement=f"ws2/d{index}", primitive="ddp",
        strategy=strategy, backend="gloo", device="cpu", world_size=2, nnodes=1, ranks="0-1",
        model="mlp", params=1000, dtype="float32", batch_size=32, bucket_mb="25",
        gradient_as_bucket_view="False", static_graph="False", avg_every="", steps=20, warmup=5,
        window_steps=2, timer="perf_counter", samples=len(samples),
        **{f"step_{k}": v for k, v in stats.as_columns().items()},
        samples_per_s=64 / (stats.p50 * 1e-6), scaling_efficiency=float("nan"),
        comm_bytes_per_step=4000, comm_busbw_GBps=1.0, comm_share=0.5, overlap=0.5,
        comm_hidden_share=0.5, max_param_diff=0.0, windows=len(samples),
    )  # fmt: skip
    names = {f.name for f in fields(DdpRow)}
    return DdpRow(**{k: v for k, v in values.items() if k in names})


def write_run(
    path: Path, rows: list[tuple[ResultRow | DdpRow, list[float]]], schema: int = SCHEMA_VERSION
) -> Path:
    """A run directory as distbench writes it: results.csv, samples.csv (rank -1 rows and one
    rank's own samples, which compare must ignore), manifest.json."""
    path.mkdir(parents=True)
    row_type = type(rows[0][0])
    with (
        CsvSink(path / RESULTS_CSV, row_type) as results,
        CsvSink(path / SAMPLES_CSV, SampleRow) as samples,
    ):
        for row, times in rows:
            results.write([row])
            samples.write(
                SampleRow(row.measurement, MAX_OVER_RANKS, trial, -1, t)
                for trial, t in enumerate(times)
            )
            samples.write(SampleRow(row.measurement, 0, t, -1, 1.0) for t in range(len(times)))
    manifest = {
        "schema_version": schema,
        "run_id": path.name,
        "host": "h",
        "torch": "2.13.0",
        "status": "completed",
    }
    write_manifest(path, manifest)
    return path


def pair(
    tmp_path: Path, base: list[float], cur: list[float], size: int = 1 << 20
) -> tuple[Path, Path]:
    a = write_run(tmp_path / "a", [(comm_row(size, base, 0), base)])
    b = write_run(tmp_path / "b", [(comm_row(size, cur, 0), cur)])
    return a, b


def rule(threshold: str = "5%", **changes: Any) -> GateRule:
    return GateRule(Thresholds(parse_threshold(threshold)), **changes)


def verdicts(a: Path, b: Path, metric: str = "time_us_p50", threshold: str = "5%") -> list[str]:
    comparison = compare_runs(load_run(a), load_run(b), parse_metric(metric), rule(threshold))
    return [row.verdict for row in comparison.rows]


# ---- checks and thresholds --------------------------------------------------------------------


def test_parse_threshold_and_check() -> None:
    assert parse_threshold("5%") == Threshold(5.0, True)
    assert parse_threshold(" 2.5 % ") == Threshold(2.5, True)
    assert parse_threshold("20us") == Threshold(20.0, False, "us")
    assert parse_threshold("2 GB/s") == Threshold(2.0, False, "GB/s")
    assert parse_threshold("2GBps") == Threshold(2.0, False, "GB/s")
    with pytest.raises(
        UsageError, match=r"'10' has no unit: write 10% .* or add the metric's unit"
    ):
        parse_threshold("10")
    check = parse_check("median:10%")
    assert check.metric is METRICS["time_us_p50"]
    assert check.threshold == Threshold(10.0, True)
    assert parse_check("5%").metric is None
    assert parse_check("busbw:3%").metric is METRICS["busbw_GBps"]
    for bad in ("5x", "-5%", "", "five%", "median:", "5 furlongs"):
        with pytest.raises(UsageError):
            parse_threshold(bad) if ":" not in bad else parse_check(bad)
    with pytest.raises(UsageError, match="unknown metric"):
        parse_check("speed:5%")


def test_worse_by_is_direction_aware() -> None:
    time, busbw = METRICS["time_us_p50"], METRICS["busbw_GBps"]
    assert Threshold(5, True).worse_by(100.0, 120.0, time) == pytest.approx(20.0)
    assert Threshold(5, True).worse_by(100.0, 80.0, time) == pytest.approx(-20.0)
    assert Threshold(5, True).worse_by(10.0, 8.0, busbw) == pytest.approx(20.0)
    assert Threshold(5, True).worse_by(10.0, 12.0, busbw) == pytest.approx(-20.0)
    assert Threshold(5, False, "us").worse_by(100.0, 130.0, time) == pytest.approx(30.0)
    assert Threshold(5, True).worse_by(0.0, 0.0, busbw) == 0.0


def test_thresholds_file_first_match_wins(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(
        'default = "4%"\n'
        '[[rules]]\nprimitive = "all_reduce"\nmax_size = "64K"\nthreshold = "20%"\n'
        '[[rules]]\nmin_size = "1K"\nthreshold = "7%"\n'
    )
    thresholds = load_thresholds(path, Threshold(5, True))
    small = {"primitive": "all_reduce", "size_bytes": "65536"}
    large = {"primitive": "all_reduce", "size_bytes": "1048576"}
    ddp = {"primitive": "ddp", "strategy": "ddp"}
    assert thresholds.for_row(small) == Threshold(20, True)
    assert thresholds.for_row(large) == Threshold(7, True)
    assert thresholds.for_row(ddp) == Threshold(4, True)  # a size band never matches DDP rows


@pytest.mark.parametrize(
    "text",
    ['threshold = "5%"\n[[rules]]\nprimitive = "x"\n', "[[rules]]\nprimitive = 'x'\n", "= bad"],
)
def test_bad_thresholds_file_is_a_usage_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(UsageError):
        load_thresholds(path, Threshold(5, True))


# ---- verdicts on fixture runs -----------------------------------------------------------------


def test_separated_slowdown_regresses(tmp_path: Path) -> None:
    assert verdicts(*pair(tmp_path, SEPARATED, SEPARATED_SLOWER)) == [REGRESSED]


def test_same_shift_inside_wide_overlapping_samples_is_noise(tmp_path: Path) -> None:
    a, b = pair(tmp_path, WIDE, WIDE_SLOWER)
    comparison = compare_runs(load_run(a), load_run(b), parse_metric("median"), rule())
    (row,) = comparison.rows
    assert row.worse_by == pytest.approx(20.0)
    assert row.verdict == NOISE
    assert row.p_value is not None and row.p_value > 0.05
    assert comparison.exit_code == 0


def test_improvement_is_never_a_regression(tmp_path: Path) -> None:
    assert verdicts(*pair(tmp_path, SEPARATED_SLOWER, SEPARATED)) == [IMPROVED]
    assert verdicts(*pair(tmp_path / "bw", SEPARATED_SLOWER, SEPARATED), metric="busbw_GBps") == [
        IMPROVED
    ]


def test_bandwidth_metric_regresses_when_time_grows(tmp_path: Path) -> None:
    assert verdicts(*pair(tmp_path, SEPARATED, SEPARATED_SLOWER), metric="busbw") == [REGRESSED]


def test_change_under_the_threshold_is_unchanged(tmp_path: Path) -> None:
    a, b = pair(tmp_path, SEPARATED, SEPARATED_SLOWER)
    assert verdicts(a, b, threshold="25%") == [UNCHANGED]
    assert verdicts(a, b, threshold="30us") == [UNCHANGED]  # 20 us worse, 30 us allowed


def test_rows_only_in_one_run_are_reported(tmp_path: Path) -> None:
    base = [(comm_row(1024, SEPARATED, 0), SEPARATED), (comm_row(65536, SEPARATED, 1), SEPARATED)]
    cur = [(comm_row(65536, SEPARATED, 0), SEPARATED), (comm_row(1 << 20, SEPARATED, 1), SEPARATED)]
    a, b = write_run(tmp_path / "a", base), write_run(tmp_path / "b", cur)
    assert verdicts(a, b) == [ONLY_BASELINE, UNCHANGED, ONLY_CURRENT]


def test_rows_match_on_mode_and_dtype(tmp_path: Path) -> None:
    base = [(comm_row(1024, SEPARATED, 0, mode="latency"), SEPARATED)]
    cur = [(comm_row(1024, SEPARATED, 0, dtype="bfloat16"), SEPARATED)]
    a, b = write_run(tmp_path / "a", base), write_run(tmp_path / "b", cur)
    with pytest.raises(UsageError, match="no row in common"):
        verdicts(a, b)


def test_too_few_samples_fall_back_to_the_threshold(tmp_path: Path) -> None:
    """Below --min-samples the rank test does not vote; the row says so."""
    a, b = pair(tmp_path, [100.0, 101.0, 102.0], [130.0, 131.0, 132.0])
    comparison = compare_runs(load_run(a), load_run(b), parse_metric("median"), rule())
    (row,) = comparison.rows
    assert row.verdict == REGRESSED and row.p_value is None
    assert row.reason == "fewer than --min-samples 5 samples: threshold only"
    assert row.note == "3 vs 3 trials"
    relaxed = compare_runs(load_run(a), load_run(b), parse_metric("median"), rule(min_samples=3))
    assert relaxed.rows[0].p_value == pytest.approx(1 / 20)


def test_ddp_rows_compare_step_time_and_samples_per_s(tmp_path: Path) -> None:
    base = [(ddp_row("ddp", SEPARATED, 0), SEPARATED), (ddp_row("grad-avg", WIDE, 1), WIDE)]
    cur = [
        (ddp_row("ddp", SEPARATED_SLOWER, 0), SEPARATED_SLOWER),
        (ddp_row("grad-avg", WIDE_SLOWER, 1), WIDE_SLOWER),
    ]
    a, b = write_run(tmp_path / "a", base), write_run(tmp_path / "b", cur)
    assert verdicts(a, b) == [REGRESSED, NOISE]
    assert verdicts(a, b, metric="samples_per_s") == [REGRESSED, NOISE]
    with pytest.raises(UsageError, match="does not exist for ddp rows"):
        verdicts(a, b, metric="algbw_GBps")


def test_a_sweep_directory_of_runs_is_one_run(tmp_path: Path) -> None:
    write_run(tmp_path / "a" / "all_reduce", [(comm_row(1024, SEPARATED, 0), SEPARATED)])
    write_run(
        tmp_path / "b" / "all_reduce", [(comm_row(1024, SEPARATED_SLOWER, 0), SEPARATED_SLOWER)]
    )
    assert verdicts(tmp_path / "a", tmp_path / "b") == [REGRESSED]


# ---- the command: exit codes, formats, baselines ----------------------------------------------


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run_cli(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = pair(tmp_path / "slow", SEPARATED, SEPARATED_SLOWER)
    code, out, _ = cli(["compare", str(a), str(b)], capsys)
    assert code == 1
    assert out.startswith("distbench compare: REGRESSION (1 regressed)")
    assert out.rstrip().splitlines()[-1] == (
        "summary: REGRESSION: 1 regressed; chance alone: 0.048 of 1 tested rows, BH on"
    )
    c, d = pair(tmp_path / "noise", WIDE, WIDE_SLOWER)
    assert cli(["compare", str(c), str(d)], capsys)[0] == 0
    code, _, err = cli(["compare", str(a), str(tmp_path / "missing")], capsys)
    assert code == 2 and err.count("\n") == 1 and "missing" in err
    code, _, err = cli(["compare", str(a), str(b), "--threshold", "lots"], capsys)
    assert code == 2 and "not a threshold" in err
    code, _, err = cli(["compare", str(a), str(b), "--format", "html"], capsys)
    assert code == 2 and "unknown format" in err
    code, _, err = cli(["compare", str(a), str(b), "--alpha", "2"], capsys)
    assert code == 2 and "alpha" in err


def test_compare_markdown_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = pair(tmp_path, SEPARATED, SEPARATED_SLOWER)
    code, out, _ = cli(["compare", str(a), str(b), "--format", "markdown"], capsys)
    assert code == 1
    assert out.startswith("### distbench compare: REGRESSION (1 regressed)")
    assert "| 1 | all_reduce | 1M |" in out and "**regressed**" in out
    code, out, _ = cli(["compare", str(a), str(b), "--format", "json", "--metric", "busbw"], capsys)
    body = json.loads(out)
    assert code == 1 and body["regressed"] is True and body["metric"] == "busbw_GBps"
    (row,) = body["rows"]
    assert row["verdict"] == REGRESSED and row["p_value"] == pytest.approx(1 / 252)
    assert row["key"]["size_bytes"] == "1048576" and body["summary"][REGRESSED] == 1


def test_compare_refuses_another_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_run(tmp_path / "a", [(comm_row(1024, SEPARATED, 0), SEPARATED)])
    b = write_run(tmp_path / "b", [(comm_row(1024, SEPARATED, 0), SEPARATED)], schema=99)
    code, _, err = cli(["compare", str(a), str(b)], capsys)
    assert code == 2 and "schema v99" in err and err.count("\n") == 1


def test_baseline_save_list_and_compare_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = pair(tmp_path, SEPARATED, SEPARATED_SLOWER)
    store = tmp_path / "store"
    monkeypatch.setenv("DISTBENCH_BASELINES", str(store))
    code, out, _ = cli(["baseline", "save", str(a), "--name", "nightly"], capsys)
    assert code == 0 and "saved baseline 'nightly'" in out
    assert sorted(p.name for p in (store / "nightly").iterdir()) == [
        "baseline.json", MANIFEST_JSON, RESULTS_CSV, SAMPLES_CSV,
    ]  # fmt: skip
    code, _, err = cli(["baseline", "save", str(b), "--name", "nightly"], capsys)
    assert code == 2 and "--force" in err
    code, out, _ = cli(["baseline", "list"], capsys)
    assert code == 0 and "nightly" in out and " 1 " in out
    assert cli(["compare", "nightly", str(b)], capsys)[0] == 1
    assert cli(["baseline", "save", str(b), "--name", "nightly", "--force"], capsys)[0] == 0
    assert cli(["compare", "nightly", str(b)], capsys)[0] == 0
    code, _, err = cli(["compare", "nope", str(b)], capsys)
    assert code == 2 and "baselines: nightly" in err
    code, _, err = cli(
        ["baseline", "save", str(a), "--name", "../x", "--store", str(store)], capsys
    )
    assert code == 2 and "not allowed" in err


# ---- ci/nightly.sh ----------------------------------------------------------------------------


def nightly(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DISTBENCH": f"{sys.executable} -m distbench"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    return subprocess.run(
        ["bash", str(REPO / "ci" / "nightly.sh"), *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.slow  # not a group, but five distbench processes
def test_nightly_gates_an_existing_run(tmp_path: Path) -> None:
    a, b = pair(tmp_path, SEPARATED, SEPARATED_SLOWER)
    store = str(tmp_path / "store")
    first = nightly(["--run-dir", str(a), "--store", store, "--bootstrap"], tmp_path)
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "store" / "nightly" / RESULTS_CSV).exists()
    assert (a / "report" / "report.md").exists()  # the bootstrap night reports too
    second = nightly(
        ["--run-dir", str(b), "--store", store, "--no-report", "--threshold", "5%"], tmp_path
    )
    assert second.returncode == 1, second.stderr
    assert "REGRESSION" in second.stderr
    assert (b / "compare.md").read_text().startswith("### distbench compare: REGRESSION")
    assert json.loads((b / "compare.json").read_text())["regressed"] is True
    assert "summary: REGRESSION: 1 regressed" in (b / "compare.txt").read_text()
    assert second.stdout.startswith("distbench compare: REGRESSION (1 regressed)")
    missing = nightly(["--run-dir", str(b), "--store", store, "--baseline", "other"], tmp_path)
    assert missing.returncode == 2
    assert f"ci/nightly.sh --run-dir {b} --bootstrap" in missing.stderr


def test_nightly_checks_the_baseline_before_sweeping(tmp_path: Path) -> None:
    out = tmp_path / "tonight"
    store = str(tmp_path / "store")
    result = nightly(["--out", str(out), "--store", store], tmp_path)
    assert result.returncode == 2 and not out.exists()  # no sweep was run
    assert "the first night is ci/nightly.sh --bootstrap" in result.stderr
    assert "ci/nightly.sh --run-dir RUN --bootstrap" in result.stderr
    for bad in ("0", "two"):
        refused = nightly(["--out", str(out), "--store", store, "--launches", bad], tmp_path)
        assert refused.returncode == 2 and not out.exists()
        assert refused.stderr.strip().splitlines() == [
            f"nightly.sh: error: --launches '{bad}' must be a whole number from 1 to 99, e.g. 2"
        ]
    usage = nightly(["--help"], tmp_path)
    assert usage.returncode == 0 and "when that command exists" not in usage.stdout
    assert "4  rows of the baseline are missing tonight" in usage.stdout


# ---- a real sweep, gated --------------------------------------------------------------------

TINY_SWEEP = """
backends = ["gloo"]
world_sizes = [2]
primitives = ["allreduce"]
sizes = ["1K", "64K"]
iters = 3
warmup = 1
trials = 3
"""


@pytest.mark.slow
def test_nightly_sweeps_bootstraps_and_gates_a_real_run(tmp_path: Path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(TINY_SWEEP)
    run, store = tmp_path / "night1", str(tmp_path / "store")
    args = ["--config", str(config), "--out", str(run), "--store", store, "--no-report"]
    first = nightly([*args, "--bootstrap"], tmp_path)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    # The same run against its own copy in the store: every row matches and nothing changed.
    second = nightly(["--run-dir", str(run), "--store", store, "--no-report"], tmp_path)
    assert second.returncode == 0, second.stderr
    body = json.loads((run / "compare.json").read_text())
    assert [r["verdict"] for r in body["rows"]] == [UNCHANGED, UNCHANGED]
    assert [r["ratio"] for r in body["rows"]] == [1.0, 1.0]
    assert {r["key"]["size_bytes"] for r in body["rows"]} == {"1024", "65536"}
    # Two launches by default, pooled by compare (6 trials a row: 3 from each).
    assert sorted(p.name for p in run.iterdir() if p.name.startswith("launch-")) == [
        "launch-1",
        "launch-2",
    ]
    assert {r["units"] for r in body["rows"]} == {"6 vs 6 trials"}
    assert "2 launches pooled (launch-1, launch-2)" in (run / "compare.txt").read_text()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda text: text[:-7], "is truncated"),
        (lambda text: "a,b\n1,2\n", "is not a distbench results.csv"),
        (lambda text: text.replace("1024,", "1O24,", 1), "not a number"),
    ],
)
def test_compare_refuses_a_damaged_run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    damage: Callable[[str], str],
    message: str,
) -> None:
    """A gate must not pass on a damaged CSV: compare reads through the report's checks."""
    a = write_run(tmp_path / "a", [(comm_row(1024, SEPARATED, 0), SEPARATED)])
    b = write_run(tmp_path / "b", [(comm_row(1024, SEPARATED, 0), SEPARATED)])
    results = b / "results.csv"
    results.write_text(damage(results.read_text()))
    code, _, err = cli(["compare", str(a), str(b)], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
