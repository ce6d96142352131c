"""Labels that tell the truth, as pure logic with exact values: the timer label, empty tails in
throughput mode, where a group's ranks ran, how numbers print (significant digits, no thousands
separator, '-' where nothing moved), the oversubscription warning, the workers' environment and the
git dirty flag, run_id in samples.csv, and the one-line errors of sweep and --world-sizes."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from distbench import tables
from distbench.collectors.manifest import worker_env
from distbench.collectors.schema import SAMPLES_CSV, SampleRow
from distbench.collectors.sink import CsvSink, read_rows
from distbench.comm.spec import CommSpec
from distbench.comm.table import render_table
from distbench.ddp.table import render_ddp_table
from distbench.groups import placement_of
from distbench.launch.run import oversubscription_warning
from distbench.parse import format_significant
from distbench.reports.render import format_number
from distbench.spec import LaunchSpec, RunSpec
from distbench.stats import Stats
from distbench.timing import timer_name
from tests.conftest import usage_error_line


@pytest.mark.parametrize(
    ("device", "mode", "timer"),
    [
        ("cpu", "throughput", "perf_counter"),
        ("cpu", "latency", "perf_counter"),
        ("cuda", "throughput", "cuda_event"),  # nccl-tests' cadence: dispatch amortised
        ("cuda", "latency", "cuda_event+dispatch"),  # one op after an idle stream
    ],
)
def test_timer_label_says_what_a_sample_includes(device: str, mode: str, timer: str) -> None:
    assert timer_name(torch.device(device), mode) == timer


def test_throughput_rows_have_no_tail_percentiles() -> None:
    stats = Stats((10.0, 11.0, 12.0, 13.0, 50.0))
    latency = stats.as_columns()
    assert latency["time_us_p95"] == pytest.approx(42.6)
    assert latency["time_us_p99"] == pytest.approx(48.52)
    throughput = stats.as_columns(tails=False)
    assert math.isnan(throughput["time_us_p95"]) and math.isnan(throughput["time_us_p99"])
    assert throughput["time_us_p50"] == 12.0 and throughput["time_us_max"] == 50.0


def test_placement_counts_the_nodes_a_group_spans() -> None:
    one_node = placement_of([(0, "node-a"), (0, "node-a")])
    assert (one_node.nnodes, one_node.hosts) == (1, "node-a")
    two = placement_of([(1, "node-b"), (0, "node-a"), (1, "node-b"), (0, "node-a")])
    assert (two.nnodes, two.hosts) == (2, "node-a+node-b")  # node order, not rank order
    loopback = placement_of([(0, "vm"), (0, "vm"), (1, "vm"), (1, "vm")])
    assert (loopback.nnodes, loopback.hosts) == (2, "vm+vm")  # one host per node


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [
        (0.0002048, 4, "0.0002048"),
        (0.02048, 3, "0.0205"),
        (17.123456, 4, "17.12"),
        (9.9996, 4, "10.00"),
        (231.45, 4, "231.4"),
        (1234.5, 4, "1234"),
        (123456.7, 4, "123457"),
        (0.0, 4, "0"),
        (-0.5, 3, "-0.500"),
        (1.7e-17, 4, "0"),  # a float's residue (an exact fit's rel. RMS), not 0.000000000000000
        (-3e-18, 4, "0"),
        (2.5e-12, 3, "0.00000000000250"),
    ],
)
def test_significant_digits_without_exponent_or_separator(
    value: float, digits: int, text: str
) -> None:
    assert format_significant(value, digits) == text


def test_report_numbers_have_no_thousands_separator() -> None:
    assert format_number(123456.7) == "123457"  # was '123,457'
    assert format_number(0.00001234) == "0.00001234"  # was '1.234e-05'
    assert format_number(float("nan")) == "—"
    assert format_number(float("inf")) == "∞"


@pytest.mark.parametrize(
    ("value", "spec", "text"),
    [
        ("0.0002048", tables.BANDWIDTH_DIGITS, "0.0002048"),  # a CSV cell, significant digits
        ("5000.0", ".2f", "5000.00"),
        (123456.7, ".1f", "123456.7"),  # no thousands separator
        (12.5, 4, "12.50"),
        (9999.7, 4, "10000"),  # '.4g' said 1e+04
        (0.0, ".3g", "0"),
        ("", ".2f", "-"),  # the column does not apply
        (None, 4, "-"),
        (float("nan"), 4, "-"),
        (float("inf"), 4, "inf"),
        ("N/A", 4, "N/A"),  # not a number: as it is
    ],
)
def test_one_number_formatter(value: float | str | None, spec: int | str, text: str) -> None:
    assert tables.format_number(value, spec) == text


def test_tables_are_plain_ascii_as_wide_as_their_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    """A narrow terminal or a forced colour changes nothing: no escape codes, nothing wrapped or
    cut, markup-like text printed as it is."""
    monkeypatch.setenv("COLUMNS", "20")
    monkeypatch.setenv("FORCE_COLOR", "1")
    wide = "x" * 150
    lines = tables.render_rows(["name", "value"], [[wide, "1.5"], ["[b]y", "12"]], ["value"])
    assert lines == [
        "name" + " " * 148 + "value",
        "-" * 157,
        wide + "    1.5",
        "[b]y" + " " * 151 + "12",
    ]


def comm_cells(**changes: str) -> dict[str, str]:
    row = {
        "primitive": "all_reduce", "backend": "gloo", "device": "cpu", "world_size": "2",
        "timer": "perf_counter", "busbw_factor": "1.0", "size_bytes": "1024", "count": "256",
        "dtype": "float32", "op": "sum", "mode": "throughput", "time_us_p50": "5000.0",
        "algbw_GBps": "0.0002048", "busbw_GBps": "0.0002048", "wrong": "-1",
    }  # fmt: skip
    return {**row, **changes}


def test_terminal_table_keeps_small_bandwidths_and_says_when_nothing_moves() -> None:
    text = render_table([comm_cells()])
    assert "0.0002048" in text and "0.000 " not in text  # was 0.000 twice
    alone = render_table([comm_cells(world_size="1", algbw_GBps="", busbw_GBps="")])
    assert "# world size 1: nothing moves between ranks, so no bandwidth (-)" in alone
    last = alone.splitlines()[-1].split()
    assert last[6:8] == ["-", "-"]  # algbw, busbw


def test_ddp_table_has_no_thousands_separator_and_keeps_small_bandwidths() -> None:
    row = {
        "model": "mlp", "params": "199946", "backend": "gloo", "device": "cpu",
        "world_size": "2", "batch_size": "32", "timer": "perf_counter", "strategy": "ddp",
        "avg_every": "", "bucket_mb": "25", "step_time_us_p50": "1000.0",
        "step_time_us_mean": "1000.0",
        "samples_per_s": "64000.0", "scaling_efficiency": "", "comm_bytes_per_step": "799784",
        "comm_busbw_GBps": "0.00041", "comm_share": "0.5", "overlap": "",
        "comm_hidden_share": "", "max_param_diff": "0.0", "window_steps": "5",
    }  # fmt: skip
    text = render_ddp_table([row])
    assert "params=199946 " in text and "0.00041" in text


def launch(world_sizes: tuple[int, ...], device: str = "cpu", nproc: int = 0) -> RunSpec:
    spec = LaunchSpec(
        backend="gloo", device=device, world_sizes=world_sizes, run_dir="/r", run_id="r"
    )
    if nproc:
        spec = replace(spec, nnodes=2, nproc_per_node=nproc, rdzv_endpoint="h:1")
    return RunSpec(launch=spec, workload=CommSpec(primitives=("all_reduce",), sizes=(1024,)))


def test_oversubscribing_cpu_ranks_is_one_warning_line() -> None:
    warning = oversubscription_warning(launch((1, 8)), cores=2)
    assert warning == (
        "warning: 8 ranks on 2 CPU cores: ranks take turns on a core, so times include waiting "
        "for the scheduler (use --world-sizes up to 2 for clean numbers)"
    )
    assert oversubscription_warning(launch((2,)), cores=2) is None
    assert oversubscription_warning(launch((4,), nproc=2), cores=2) is None  # 2 per node
    assert oversubscription_warning(launch((8,), nproc=4), cores=2) == (
        "warning: 4 ranks on 2 CPU cores: ranks take turns on a core, so times include waiting "
        "for the scheduler (use --nproc-per-node up to 2 for clean numbers)"
    )


def test_worker_env_keeps_what_changes_a_run_and_drops_per_rank_variables() -> None:
    environ = {
        "OMP_NUM_THREADS": "1", "NCCL_DEBUG": "INFO", "MASTER_ADDR": "127.0.0.1",
        "TORCH_NCCL_BLOCKING_WAIT": "1", "RANK": "3", "LOCAL_RANK": "1", "GROUP_RANK": "1",
        "WORLD_SIZE": "4", "HOME": "/root", "MKL_NUM_THREADS": "2",
    }  # fmt: skip
    assert worker_env(environ) == {
        "MASTER_ADDR": "127.0.0.1",
        "MKL_NUM_THREADS": "2",
        "NCCL_DEBUG": "INFO",
        "OMP_NUM_THREADS": "1",
        "TORCH_NCCL_BLOCKING_WAIT": "1",
    }


def test_samples_sink_stamps_the_run_id(tmp_path: Path) -> None:
    path = tmp_path / SAMPLES_CSV
    with CsvSink(path, SampleRow, run_id="20260101T000000Z-allreduce") as sink:
        sink.write([SampleRow("ws2/i0", -1, 0, -1, 12.5)])
        sink.write([SampleRow("ws2/i1", -1, 0, -1, 13.5, run_id="kept")])
    rows = read_rows(path)
    assert [r["run_id"] for r in rows] == ["20260101T000000Z-allreduce", "kept"]
    assert rows[0]["loss"] == ""  # DDP-only, empty for communication samples


def test_sweep_of_ddp_points_to_the_ddp_command(capsys: pytest.CaptureFixture[str]) -> None:
    line = usage_error_line(["sweep", "--primitives", "allreduce,ddp"], capsys)
    assert "distbench ddp" in line


@pytest.mark.parametrize("text", ["2,", ",4", "2,,4"])
def test_world_sizes_error_shows_a_world_size_list(
    text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = usage_error_line(["allreduce", "--world-sizes", text], capsys)
    assert "e.g. 1,2,4" in line and "1M" not in line
