"""The report groups rows by the schema's case key: gloo on CPU and gloo on CUDA, or one node and
two, stay apart in every table and figure. Canned runs (exact times from t = alpha + size/beta),
written as distbench writes them, including the empty cells of schema v2 (p95/p99 in throughput
mode, bandwidths at world size 1)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from distbench.collectors.schema import (
    COMM_CASE_COLUMNS,
    DDP_MATCH_KEY,
    MANIFEST_JSON,
    MAX_OVER_RANKS,
    RESULTS_CSV,
    SAMPLES_CSV,
    SCHEMA_VERSION,
    ResultRow,
    SampleRow,
)
from distbench.collectors.sink import CsvSink
from distbench.ddp.spec import COMM_BASELINE
from distbench.reports.load import load_runs
from distbench.reports.repeats import keep_one_row_per_case
from distbench.reports.report import analysis as an
from distbench.reports.report.figures import ddp as fd
from distbench.reports.report.pairs import split_matrix_rows
from distbench.reports.report.sources import assign_sources
from distbench.reports.runs import load_run
from distbench.stats import Stats
from tests.paths import DATA
from tests.unit.reports.test_compare import ddp_row, write_run

SIZES = [1024, 16384, 262144, 1048576, 4194304]
# (device, nnodes) -> (alpha µs, beta GB/s): CUDA tensors over gloo pay a copy, so they differ
LINES = {("cpu", 1): (20.0, 2.0), ("cuda", 1): (60.0, 1.0), ("cpu", 2): (80.0, 0.5)}

SEPARATED = [100.0, 101.0, 102.0, 103.0, 104.0]
SEPARATED_SLOWER = [120.0, 121.0, 122.0, 123.0, 125.0]  # +20 %, no overlap


def canned_row(index: int, device: str, nnodes: int, world_size: int, size: int) -> ResultRow:
    alpha, beta = LINES[device, nnodes]
    p50 = alpha * world_size / 2 + size / (beta * 1e3)
    stats = Stats((p50 * 0.99, p50, p50 * 1.02))
    algbw = size / p50 / 1e3 if world_size > 1 else math.nan
    factor = 2 * (world_size - 1) / world_size
    return ResultRow(
        run_id="canned", label="", host="vm", measurement=f"ws{world_size}/i{index}",
        primitive="all_reduce", backend="gloo", device=device, world_size=world_size,
        nnodes=nnodes, ranks=f"0-{world_size - 1}", dtype="float32", op="sum", size_bytes=size,
        requested_bytes=size, count=size // 4, root="", src="", dst="", pattern="",
        mode="throughput", timer="perf_counter", iters=20, warmup=5, trials=3, samples=3,
        **stats.as_columns(tails=False), algbw_GBps=algbw, busbw_GBps=algbw * factor,
        busbw_factor=factor, wrong=-1, hosts="+".join(["vm"] * nnodes),
    )  # fmt: skip


def write_canned_run(path: Path, with_nodes: bool = False) -> Path:
    """One run holding gloo-on-CPU and gloo-on-CUDA rows of the same case (and, with_nodes, the
    CPU case on two nodes), at world sizes 1, 2 and 4."""
    path.mkdir(parents=True)
    rows: list[ResultRow] = []
    samples: list[SampleRow] = []
    lines = [key for key in LINES if with_nodes or key[1] == 1]
    for world_size in (1, 2, 4):
        for device, nnodes in lines:
            for size in SIZES:
                row = canned_row(len(rows), device, nnodes, world_size, size)
                rows.append(row)
                samples += [
                    SampleRow(row.measurement, MAX_OVER_RANKS, trial, -1, t)
                    for trial, t in enumerate((row.time_us_min, row.time_us_p50, row.time_us_max))
                ]
    with CsvSink(path / RESULTS_CSV, ResultRow) as sink:
        sink.write(rows)
    with CsvSink(path / SAMPLES_CSV, SampleRow, run_id="canned") as sink:
        sink.write(samples)
    manifest = {"schema_version": SCHEMA_VERSION, "run_id": "canned", "status": "completed"}
    (path / MANIFEST_JSON).write_text(json.dumps(manifest))
    return path


@pytest.fixture
def lines(tmp_path: Path) -> pd.DataFrame:
    loaded = load_runs([write_canned_run(tmp_path / "run", with_nodes=True)])
    an.assign_sources(loaded)
    rows, _ = split_matrix_rows(loaded.comm)
    return rows.assign(series=an.series_names(rows, with_source=False))


def test_the_report_key_is_the_schema_case_key() -> None:
    assert ["source", *COMM_CASE_COLUMNS] == an.CASE
    assert {"device", "nnodes"} <= set(an.CASE)
    assert "device" in an.DDP_CONFIG and "nnodes" in an.DDP_CONFIG


def test_summary_and_fit_keep_devices_and_node_counts_apart(lines: pd.DataFrame) -> None:
    summary = an.summary_table(lines)
    at2 = summary[summary["world_size"] == 2].set_index(["device", "nnodes"])
    assert sorted(at2.index) == [("cpu", 1), ("cpu", 2), ("cuda", 1)]  # was one merged line
    # each line's smallest p50 is its own: 20 + 1024 / 2000 µs on CPU, 60 + 1.024 µs on CUDA
    assert at2.loc[("cpu", 1), "small_p50_us"] == pytest.approx(20.512)
    assert at2.loc[("cuda", 1), "small_p50_us"] == pytest.approx(61.024)
    fits = an.fit_table(lines)
    at2 = fits[fits["world_size"] == 2].set_index(["device", "nnodes"])
    assert at2.loc[("cpu", 1), "alpha_us"] == pytest.approx(20.0)
    assert at2.loc[("cuda", 1), "beta_GBps"] == pytest.approx(1.0)
    assert at2.loc[("cpu", 2), "beta_GBps"] == pytest.approx(0.5)


def test_every_figure_line_is_one_case(lines: pd.DataFrame) -> None:
    names = lines.groupby(["primitive", "mode", "series"])[list(an.CASE)].nunique()
    assert (names.drop(columns=["primitive", "mode"]) == 1).all().all()
    assert {"gloo n=2 cpu 1 node(s)", "gloo n=2 cuda 1 node(s)", "gloo n=2 cpu 2 node(s)"} <= set(
        lines["series"]
    )
    scaling = an.scaling_rows(lines, most_sizes=2)
    # lines over world size: one per device and, where the world size does not decide it (two
    # placements of the same size), per node count
    assert sorted(scaling["line"].unique()) == [
        "canned · gloo cpu 1 node(s)",
        "canned · gloo cpu 2 node(s)",
        "canned · gloo cuda 1 node(s)",
    ]
    per_point = scaling.groupby(["line", "world_size", "requested_bytes"]).size()
    assert (per_point == 1).all()
    one_node = an.scaling_rows(lines[lines["nnodes"] == 1], most_sizes=2)
    assert sorted(one_node["line"].unique()) == ["canned · gloo cpu", "canned · gloo cuda"]


def test_ddp_split_keeps_devices_apart_and_uses_means() -> None:
    config = {c: "x" for c in an.DDP_CONFIG if c not in ("source", "world_size", "nnodes")}
    rows = []
    for device, compute, comm in (("cpu", 1000.0, 500.0), ("cuda", 100.0, 50.0)):
        for strategy, mean in (("ddp-nocomm", compute), ("ddp", compute + comm)):
            rows.append(
                {**config, "source": "run", "world_size": 2, "nnodes": 1, "device": device,
                 "strategy": strategy, "step_time_us_mean": mean, "step_time_us_p50": compute}
            )  # fmt: skip
    ddp = pd.DataFrame(rows)
    ddp["source"] = pd.Categorical(ddp["source"])
    split = an.ddp_split(ddp).set_index(["device", "strategy"])
    assert split.loc[("cpu", "ddp"), "comm_ms"] == pytest.approx(0.5)
    assert split.loc[("cuda", "ddp"), "comm_ms"] == pytest.approx(0.05)
    assert split["panel"].nunique() == 2


def split_rows(with_column: bool) -> pd.DataFrame:
    """One configuration at 2 ranks: ddp-nocomm 1000 us, ddp 1500, local 800, grad-avg 1100,
    param-avg 900 (mean steps), each row naming its comm_baseline as bench/ddp/spec.py does."""
    config = {c: "x" for c in an.DDP_CONFIG if c not in ("source", "world_size", "nnodes")}
    means = {"ddp-nocomm": 1000.0, "ddp": 1500.0, "local": 800.0, "grad-avg": 1100.0}
    means["param-avg"] = 900.0
    rows = [
        {**config, "source": "run", "world_size": 2, "nnodes": 1, "strategy": strategy,
         "step_time_us_mean": mean, "step_time_us_p50": mean}
        | ({"comm_baseline": COMM_BASELINE[strategy]} if with_column else {})
        for strategy, mean in means.items()
    ]  # fmt: skip
    ddp = pd.DataFrame(rows)
    ddp["source"] = pd.Categorical(ddp["source"])
    return ddp


def test_ddp_split_subtracts_each_strategy_s_own_comm_baseline() -> None:
    """grad-avg and param-avg subtract local's step (their comm_baseline, as their rows' comm_share
    does), DDP's strategies ddp-nocomm's; a run without the column (older than v4) subtracts
    ddp-nocomm everywhere, as its rows' comm_share did."""
    split = an.ddp_split(split_rows(with_column=True)).set_index("strategy")
    assert split.loc["grad-avg", "comm_baseline"] == "local"
    assert split.loc["grad-avg", "compute_ms"] == pytest.approx(0.8)
    assert split.loc["grad-avg", "comm_ms"] == pytest.approx(0.3)  # 1100 - 800 us
    assert split.loc["param-avg", "comm_ms"] == pytest.approx(0.1)  # 900 - 800 us
    assert split.loc["ddp", "compute_ms"] == pytest.approx(1.0)
    assert split.loc["ddp", "comm_ms"] == pytest.approx(0.5)
    assert split.loc["local", "comm_ms"] == 0 and split.loc["ddp-nocomm", "comm_ms"] == 0
    old = an.ddp_split(split_rows(with_column=False)).set_index("strategy")
    assert set(old["comm_baseline"]) == {"ddp-nocomm"}
    assert old.loc["grad-avg", "comm_ms"] == pytest.approx(0.1)  # 1100 - 1000 us
    assert old.loc["param-avg", "comm_ms"] == 0  # faster than ddp-nocomm: clipped
    blank = split_rows(with_column=True)
    blank["comm_baseline"] = ""  # a row naming none: ddp-nocomm, as v3
    assert an.ddp_split(blank).set_index("strategy").loc["grad-avg", "comm_ms"] == 0.1


def test_ddp_split_of_a_v1_run_reads_its_migrated_baseline() -> None:
    """The frozen v1 fixture's rows, loaded (migrated to v4's comm_baseline = ddp-nocomm, how
    their comm_share was computed): every bar subtracts ddp-nocomm's mean step."""
    loaded = load_runs([DATA / "cluster-a" / "ddp"])
    assign_sources(loaded)
    ddp = loaded.ddp
    split = an.ddp_split(ddp)
    assert set(split["comm_baseline"]) == {"ddp-nocomm"}
    at_2 = split[split["world_size"] == 2].set_index("strategy")
    nocomm = ddp[(ddp["strategy"] == "ddp-nocomm") & (ddp["world_size"] == 2)]
    assert at_2.loc["grad-avg", "compute_ms"] == pytest.approx(
        float(nocomm["step_time_us_mean"].median()) / 1e3
    )
    figure = fd.plot_ddp_split(split)
    assert figure is not None
    legend = [t.get_text() for t in figure.legends[0].get_texts()]
    assert "compute (ddp-nocomm mean)" in legend


def test_ddp_split_figure_names_each_bar_s_baseline_when_they_differ() -> None:
    figure = fd.plot_ddp_split(an.ddp_split(split_rows(with_column=True)))
    assert figure is not None
    ticks = [t.get_text() for t in figure.axes[0].get_xticklabels()]
    assert "grad-avg (local)" in ticks and "ddp (ddp-nocomm)" in ticks
    assert "compute (baseline mean)" in [t.get_text() for t in figure.legends[0].get_texts()]


def test_ddp_split_draws_a_bar_per_bucket_size_and_names_a_missing_baseline() -> None:
    """A new user's `--strategies ddp,ddp-nocomm,grad-avg --bucket-mb 1,5,25` (the docs' "find
    your bucket size") drew one ddp bar, the median of the three bucket sizes, and no grad-avg bar
    with nothing to say why (its baseline, local, was not run)."""
    config = {c: "x" for c in an.DDP_CONFIG if c not in ("source", "world_size", "nnodes")}
    means = {("ddp", "1"): 1800.0, ("ddp", "5"): 1500.0, ("ddp", "25"): 1300.0}
    means |= {("ddp-nocomm", "25"): 1000.0, ("grad-avg", ""): 1400.0}
    rows = [
        {**config, "source": "run", "world_size": 2, "nnodes": 1, "strategy": strategy,
         "bucket_mb": bucket, "step_time_us_mean": mean, "step_time_us_p50": mean,
         "comm_baseline": COMM_BASELINE[strategy]}
        for (strategy, bucket), mean in means.items()
    ]  # fmt: skip
    ddp = pd.DataFrame(rows)
    ddp["source"] = pd.Categorical(ddp["source"])
    split = an.ddp_split(ddp)
    assert split["strategy"].tolist() == [
        "ddp bucket_mb=1", "ddp bucket_mb=5", "ddp bucket_mb=25", "ddp-nocomm",
    ]  # fmt: skip
    assert split["comm_ms"].tolist() == pytest.approx([0.8, 0.5, 0.3, 0.0])
    assert an.missing_baselines(ddp) == [
        "DDP strategies split: grad-avg has no bar: its comm_baseline, local, did not run beside "
        "it (add local to --strategies); its comm_share and comm_busbw are empty too"
    ]
    assert an.missing_baselines(split_rows(with_column=True)) == []


def test_compare_and_report_agree_on_which_ddp_rows_are_one_case(tmp_path: Path) -> None:
    """One match key (schema.DDP_MATCH_KEY) in both: a repeated DDP case is one row, the later one,
    in compare and in report; rows that differ in any key column stay apart in both."""
    rows = [
        ddp_row("ddp", SEPARATED, 0),
        ddp_row("ddp-nocomm", SEPARATED, 1),
        replace(ddp_row("ddp", SEPARATED, 2), static_graph="True"),
        replace(ddp_row("param-avg", SEPARATED, 3), bucket_mb="", avg_every="4"),
        ddp_row("ddp", SEPARATED_SLOWER, 4),  # row 0's case again: the later row counts
    ]
    run = write_run(tmp_path / "run", [(row, [row.step_time_us_p50]) for row in rows])
    compared = load_run(run)
    assert all({c for c, _ in key} == {"kind", *DDP_MATCH_KEY} for key in compared.rows)
    by_compare = {
        tuple(v for c, v in key if c != "kind"): float(row.values["step_time_us_p50"])
        for key, row in compared.rows.items()
    }
    loaded = load_runs([run])
    an.assign_sources(loaded)
    keep_one_row_per_case(loaded)  # what build_report does
    kept = loaded.ddp[[*DDP_MATCH_KEY, "step_time_us_p50"]].itertuples(index=False)
    by_report = {tuple(str(v) for v in row[:-1]): float(row[-1]) for row in kept}
    assert len(by_compare) == 4 and by_report == by_compare
    cells = (str(getattr(rows[4], c)) for c in DDP_MATCH_KEY)
    key = tuple(cell.lower() if cell in ("True", "False") else cell for cell in cells)  # as read
    assert by_compare[key] == pytest.approx(rows[4].step_time_us_p50)


def test_a_case_measured_twice_in_one_run_is_named_as_such(tmp_path: Path) -> None:
    """Within one results.csv (a pairs confirmation, a resumed case) the note says the later row
    of that run is shown; across runs it names the runs and the start-time rule."""
    rows = [ddp_row("ddp", SEPARATED, 0), ddp_row("ddp", SEPARATED_SLOWER, 1)]
    run = write_run(tmp_path / "run", [(row, [row.step_time_us_p50]) for row in rows])
    loaded = load_runs([run])
    an.assign_sources(loaded)
    keep_one_row_per_case(loaded)
    assert len(loaded.ddp) == 1
    assert float(loaded.ddp["step_time_us_p50"].iloc[0]) == rows[1].step_time_us_p50
    (note,) = loaded.notes
    assert "1 DDP row(s) of run" in note and "the later row is shown" in note
    assert "started last" not in note
