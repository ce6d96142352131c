"""Pure logic of `distbench ddp`: derived-metric formulas, model sizes, option parsers, the spec's
validation and run order, the table. Exact numbers; no process group."""

from __future__ import annotations

import math
import re

import pytest
import torch

from distbench.collectors.schema import DdpRow, column_names
from distbench.ddp import metrics as m
from distbench.ddp.args import (
    DdpArgs,
    build_ddp_spec,
    parse_bucket_mbs,
    parse_strategies,
    parse_window_steps,
    resolve_shape,
)
from distbench.ddp.models import build_model
from distbench.ddp.params import param_count, parse_param_count, width_for_params
from distbench.ddp.spec import STRATEGIES, DdpSpec, StrategyRun, plan_size
from distbench.ddp.strategies import comm_bytes_per_step
from distbench.ddp.table import render_ddp_table
from distbench.parse import UsageError


def test_samples_per_s() -> None:
    assert m.samples_per_s(2, 32, 1000.0) == 64_000.0  # 64 samples per millisecond
    assert math.isnan(m.samples_per_s(2, 32, 0.0))


def test_scaling_efficiency() -> None:
    assert m.scaling_efficiency(4, 300.0, 100.0) == 0.75
    assert m.scaling_efficiency(1, 100.0, 100.0) == 1.0
    assert math.isnan(m.scaling_efficiency(2, 300.0, math.nan))


def test_comm_share() -> None:
    assert m.comm_share(2, 1000.0, 750.0) == 0.25
    assert m.comm_share(2, 750.0, 750.0) == 0.0
    assert m.comm_share(2, 500.0, 750.0) == -0.5  # not clamped: noise stays visible
    assert math.isnan(m.comm_share(2, 1000.0, math.nan))


def test_comm_hidden_share() -> None:
    # nocomm 600, ddp-nooverlap 1000: its messages expose 400 us; a step of 700 exposes 100 of
    # them -> 75 % hidden.
    assert m.comm_hidden_share(2, 700.0, 600.0, 1000.0) == 0.75
    assert m.comm_hidden_share(2, 1000.0, 600.0, 1000.0) == 0.0  # the reference itself
    assert m.comm_hidden_share(2, 600.0, 600.0, 1000.0) == 1.0
    assert m.comm_hidden_share(2, 1200.0, 600.0, 1000.0) == -0.5  # slower: not clamped
    assert math.isnan(m.comm_hidden_share(2, 700.0, 600.0, 600.0))  # nothing exposed to hide
    assert math.isnan(m.comm_hidden_share(2, 700.0, math.nan, 1000.0))


def test_nothing_crosses_a_wire_at_one_rank() -> None:
    """World size 1: communication columns are empty (NaN), not a number from timing noise."""
    assert math.isnan(m.comm_share(1, 1000.0, 750.0))
    assert math.isnan(m.comm_busbw_gbps(1_000_000, 1600.0, 600.0, 1))
    assert math.isnan(m.comm_hidden_share(1, 700.0, 600.0, 1000.0))


def test_comm_busbw() -> None:
    # 1e6 bytes in 1000 us exposed = 1 GB/s algbw; x 2(n-1)/n = 1.5 at n = 4.
    assert m.comm_busbw_gbps(1_000_000, 1600.0, 600.0, 4) == pytest.approx(1.5, rel=1e-12)
    assert math.isnan(m.comm_busbw_gbps(1_000_000, 500.0, 600.0, 2))  # nothing exposed
    assert math.isnan(m.comm_busbw_gbps(0, 1600.0, 600.0, 2))


def test_comm_bytes_per_step() -> None:
    assert comm_bytes_per_step("ddp", 1000, 1) == 4000
    assert comm_bytes_per_step("grad-avg", 1000, 1) == 4000
    assert comm_bytes_per_step("grad-avg-flat", 1000, 1) == 4000
    assert comm_bytes_per_step("ddp-bf16", 1000, 1) == 2000
    assert comm_bytes_per_step("ddp-fp16", 1000, 1) == 2000
    assert comm_bytes_per_step("ddp-nocomm", 1000, 1) == 0
    assert comm_bytes_per_step("param-avg", 1000, 1) == 4000
    assert comm_bytes_per_step("param-avg", 1000, 3) == 1333


def test_one_rank_sends_no_bytes() -> None:
    """`distbench ddp --world-sizes 1,2` showed comm_MB 0.800 (fsdp 2.399) at world size 1,
    beside an empty busbw and comm_share: at one rank nothing crosses a link, so the bytes per
    step are empty too (results.csv's cell, the table's '-'); at two ranks they are the
    strategy's (the end-to-end run: tests/integration/ddp/test_ddp.py)."""
    from distbench.ddp.rows import comm_columns

    base = {("ddp-nocomm", "25"): 600.0, ("local", ""): 500.0}
    for strategy, fsdp, sent in (("ddp", (0, 0), 4000), ("fsdp", (8000, 4000), 12000)):
        two = comm_columns(strategy, 1000.0, 4000, fsdp, base, 2)
        assert two["comm_bytes_per_step"] == sent
        one = comm_columns(strategy, 1000.0, 4000, fsdp, base, 1)
        assert one["comm_bytes_per_step"] is None
        assert math.isnan(one["comm_busbw_GBps"]) and math.isnan(one["comm_share"])


@pytest.mark.parametrize(
    ("model", "width", "depth", "expected"),
    [
        ("mlp", 8, 1, 90),  # Linear(8, 10)
        ("mlp", 12, 3, 442),  # 2 x (144 + 12) + 130
        ("mlp", 256, 4, 199_946),
        ("transformer", 8, 1, 962),  # 12 x 64 + 13 x 8 + 90
        ("transformer", 64, 2, 100_618),
    ],
)
def test_param_count_matches_the_built_model(
    model: str, width: int, depth: int, expected: int
) -> None:
    assert param_count(model, width, depth) == expected
    spec = DdpSpec(model=model, width=width, depth=depth)
    built = build_model(spec, torch.device("cpu"))
    assert sum(p.numel() for p in built.parameters()) == expected


def test_width_for_params() -> None:
    assert width_for_params("mlp", 4, 10_000_000) == 1824  # 10,004,650 parameters
    assert param_count("mlp", 1824, 4) == 10_004_650
    assert width_for_params("mlp", 1, 10_000_000) == 999_999  # exactly 10M
    assert width_for_params("transformer", 2, 10_000_000) == 644  # a multiple of 4 heads
    assert width_for_params("mlp", 4, 1) == 1


def test_parse_param_count() -> None:
    assert parse_param_count("10M") == 10_000_000
    assert parse_param_count("1.5k") == 1_500
    assert parse_param_count("2G") == 2_000_000_000
    assert parse_param_count("123") == 123
    for bad in ("0", "x", "10Q", "-3", ""):
        with pytest.raises(UsageError):
            parse_param_count(bad)


def test_parsers() -> None:
    assert parse_strategies("all") == list(STRATEGIES)
    assert parse_strategies("grad-avg, ddp,ddp") == ["grad-avg", "ddp"]
    assert parse_bucket_mbs("1,0.5,25,1") == [1.0, 0.5, 25.0]
    for bad in ("x", "0", "-1", "1,,2", "inf"):
        with pytest.raises(UsageError):
            parse_bucket_mbs(bad)
    with pytest.raises(UsageError, match="unknown strategy 'zero3'"):
        parse_strategies("ddp,zero3")
    assert resolve_shape(DdpArgs()) == (256, 4)
    assert resolve_shape(DdpArgs(model="transformer")) == (128, 2)
    assert resolve_shape(DdpArgs(depth=2, params=10**6)) == (width_for_params("mlp", 2, 10**6), 2)
    with pytest.raises(UsageError, match="either --params or --width"):
        resolve_shape(DdpArgs(width=64, params=10**6))


def test_build_ddp_spec_defaults() -> None:
    spec = build_ddp_spec(DdpArgs())
    assert spec.strategies == STRATEGIES
    assert (spec.model, spec.width, spec.depth, spec.steps, spec.warmup) == ("mlp", 256, 4, 20, 5)
    assert spec.bucket_mbs == (25.0,)
    assert (spec.window_steps, spec.window_length()) == (0, 2)  # 10 windows: a rank test's samples


@pytest.mark.parametrize(
    ("steps", "window"),
    [(20, 2), (50, 5), (100, 10), (30, 3), (25, 1), (40, 4), (9, 1), (3, 1), (1, 1), (200, 20)],
)
def test_the_automatic_window_gives_ten_equal_windows_or_more(steps: int, window: int) -> None:
    """The largest divisor of steps at most steps // 10: equal windows, at least 10 of them
    (or one step each below 10 steps)."""
    length = DdpSpec(steps=steps).window_length()
    assert length == window
    assert steps % length == 0 and (steps // length >= 10 or length == 1)


def test_window_steps_option() -> None:
    assert parse_window_steps("auto") == 0
    assert parse_window_steps(" AUTO ") == 0
    assert parse_window_steps("4") == 4
    for bad in ("0", "-2", "x", ""):
        with pytest.raises(UsageError):
            parse_window_steps(bad)
    spec = build_ddp_spec(DdpArgs(steps=12, window_steps=3))
    assert (spec.window_steps, spec.window_length()) == (3, 3)
    with pytest.raises(UsageError, match=r"--window-steps 5 does not divide --steps 12 .*1, 2, 3"):
        build_ddp_spec(DdpArgs(steps=12, window_steps=5))
    with pytest.raises(UsageError, match="--window-steps 30 does not divide --steps 20"):
        DdpSpec(steps=20, window_steps=30)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategies": ()}, "no strategy"),
        ({"strategies": ("ddp", "zero")}, "unknown strategy 'zero'"),
        ({"model": "cnn"}, "unknown model 'cnn'"),
        ({"steps": 0}, "--steps must be at least 1"),
        ({"avg_every": 0}, "--avg-every must be at least 1"),
        ({"bucket_mbs": (0.0,)}, "--bucket-mb must be positive"),
        ({"model": "transformer", "width": 30}, "multiple of 4"),
        ({"dtype": "float16"}, "float32 only"),
    ],
)
def test_spec_validation(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        DdpSpec(**kwargs)


def test_runs_put_the_baselines_first_and_sweep_buckets() -> None:
    spec = DdpSpec(
        strategies=("param-avg", "ddp-bf16", "grad-avg", "ddp-nocomm", "ddp"), bucket_mbs=(1, 25)
    )
    assert spec.runs() == [
        StrategyRun("ddp", 1),
        StrategyRun("ddp", 25),
        StrategyRun("ddp-nocomm", 1),
        StrategyRun("ddp-bf16", 1),
        StrategyRun("ddp-bf16", 25),
        StrategyRun("grad-avg", None),
        StrategyRun("param-avg", None),
    ]
    # ddp-nooverlap, comm_hidden_share's reference, is a baseline: it runs (per bucket size)
    # before the rest.
    swept = DdpSpec(strategies=("grad-avg", "ddp-nooverlap", "ddp"), bucket_mbs=(1, 25))
    assert swept.runs() == [
        StrategyRun("ddp", 1),
        StrategyRun("ddp", 25),
        StrategyRun("ddp-nooverlap", 1),
        StrategyRun("ddp-nooverlap", 25),
        StrategyRun("grad-avg", None),
    ]
    assert plan_size(spec, 2) == 7
    assert plan_size(DdpSpec(bucket_mbs=(1.0, 5.0, 25.0)), 4) == 19  # 4 swept x 3 + 7


def test_render_table() -> None:
    row = dict.fromkeys(column_names(DdpRow), "")
    row.update(
        model="mlp",
        params="199946",
        backend="gloo",
        device="cpu",
        world_size="2",
        batch_size="32",
        timer="perf_counter",
        strategy="ddp",
        bucket_mb="25",
        window_steps="2",
        step_time_us_p50="2000.0",
        step_time_us_mean="2250.04",
        samples_per_s="28444.5",
        comm_bytes_per_step="799784",
        comm_share="0.6931",
        comm_baseline="ddp-nocomm",
        comm_hidden_share="0.4182",
        max_param_diff="0.0",
    )
    text = render_ddp_table([row])
    assert re.search(r"# ddp  model=mlp params=199,?946  batch=32/rank", text)
    assert "step=mean of the slowest rank's windows of 2 steps" in text
    assert text.splitlines()[1].split()[-2:] == ["comm_hidden", "max_param_diff"]
    assert set(text.splitlines()[2]) == {"-"}  # the rule under the header
    cells = text.splitlines()[3].split()  # the step column is the mean, not the p50
    assert cells == [
        "ddp", "25", "2250.0", "28444.5", "-", "0.800", "-", "0.693", "ddp-nocomm", "0.418", "0",
    ]  # fmt: skip
    assert "comm_share: against the row's own step without communication (vs:" in text
    one = render_ddp_table([{**row, "window_steps": "1"}])
    assert "windows of 1 step  " in one
    assert "# comm_hidden" not in text  # a share inside [0, 1] needs no word
    below = render_ddp_table([{**row, "comm_hidden_share": "-1.71"}]).splitlines()[-1]
    assert below.startswith("# comm_hidden below 0: the overlapped step was slower"), below
    above = render_ddp_table([{**row, "comm_hidden_share": "1.2"}]).splitlines()[-1]
    assert above.startswith("# comm_hidden above 1:"), above


def test_render_table_shows_peak_memory_where_measured() -> None:
    """fsdp's trade (#15 §4) reads in the terminal: peak_MB per strategy, its source named."""
    base = dict.fromkeys(column_names(DdpRow), "")
    base.update(model="mlp", params="442", backend="gloo", device="cpu", world_size="2")
    base.update(batch_size="4", timer="perf_counter", window_steps="2", mem_source="rss_hwm")
    rows = [
        {**base, "strategy": "ddp", "step_time_us_mean": "100", "peak_mem_bytes": "34000000"},
        {**base, "strategy": "fsdp", "step_time_us_mean": "200", "peak_mem_bytes": "3300000"},
    ]
    lines = render_ddp_table(rows).splitlines()
    assert "peak memory=rss_hwm above the baseline" in lines[0]
    assert lines[1].split()[-1] == "peak_MB"
    assert [line.split()[-1] for line in lines[3:]] == ["34.0", "3.3"]
    assert "peak_MB" not in render_ddp_table([{**rows[0], "peak_mem_bytes": ""}])
