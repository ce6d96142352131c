"""Each DDP strategy's communication share and busbw subtract its own no-communication step
(#25 §11): DDP's strategies ddp-nocomm's, the manual ones and FSDP the plain model's (`local`),
and the row names it (comm_baseline). v3 subtracted ddp-nocomm's from every strategy, whose DDP
hooks and bucket copies made a manual strategy's exposed time look shorter and its busbw higher:
these tests fail on that definition. And nn.DataParallel's peak memory covers all its GPUs."""

from __future__ import annotations

import math

import pytest
import torch

from distbench.ddp.memory import devices_of
from distbench.ddp.rows import comm_columns
from distbench.ddp.spec import BASELINES, COMM_BASELINE, STRATEGIES, DdpSpec, StrategyRun

# ddp-nocomm's step carries DDP's hooks and bucket copies: longer than the plain model's
BASELINE_US = {("ddp-nocomm", "25"): 100.0, ("local", ""): 80.0}


def test_manual_strategies_subtract_the_plain_models_step() -> None:
    for strategy in ("grad-avg", "grad-avg-flat", "param-avg"):
        columns = comm_columns(strategy, 120.0, 4_000_000, (0, 0), BASELINE_US, 2)
        assert columns["comm_baseline"] == "local"
        assert columns["comm_share"] == pytest.approx(40.0 / 120.0)  # v3: 20 / 120
        # 4 MB in 40 us exposed: 100 GB/s algbw, x 2(n-1)/n = 1 at n = 2 (v3: 200 GB/s)
        assert columns["comm_busbw_GBps"] == pytest.approx(100.0)


def test_ddp_strategies_keep_ddp_nocomm() -> None:
    for strategy in ("ddp", "ddp-nooverlap", "ddp-bf16", "ddp-fp16", "ddp-nocomm"):
        columns = comm_columns(strategy, 120.0, 4_000_000, (0, 0), BASELINE_US, 2)
        assert columns["comm_baseline"] == "ddp-nocomm"
        assert columns["comm_share"] == pytest.approx(20.0 / 120.0)


def test_fsdp_subtracts_the_plain_model_and_counts_gather_and_scatter() -> None:
    columns = comm_columns("fsdp", 120.0, 4_000_000, (3_000_000, 1_000_000), BASELINE_US, 2)
    assert columns["comm_baseline"] == "local"
    assert columns["comm_bytes_per_step"] == 4_000_000
    assert columns["comm_busbw_GBps"] == pytest.approx(50.0)  # all_gather's factor (n-1)/n
    assert columns["comm_share"] == pytest.approx(40.0 / 120.0)


def test_without_its_baseline_or_at_one_rank_nothing_is_claimed() -> None:
    only_ddp = {("ddp-nocomm", "25"): 100.0}
    columns = comm_columns("grad-avg", 120.0, 4_000_000, (0, 0), only_ddp, 2)
    assert math.isnan(columns["comm_share"]) and math.isnan(columns["comm_busbw_GBps"])
    assert columns["comm_baseline"] == "local"  # what it would subtract, not ddp-nocomm's
    assert math.isnan(comm_columns("grad-avg", 120.0, 1, (0, 0), BASELINE_US, 1)["comm_share"])
    dp = comm_columns("dp", 120.0, 0, (0, 0), BASELINE_US, 1)
    assert dp["comm_baseline"] == "" and math.isnan(dp["comm_share"])


def test_every_strategy_has_its_baseline_and_local_runs_first() -> None:
    assert set(COMM_BASELINE) == set(STRATEGIES)
    assert set(COMM_BASELINE.values()) <= set(BASELINES)
    runs = DdpSpec(strategies=("fsdp", "grad-avg", "local", "ddp")).runs()
    assert runs[:2] == [StrategyRun("ddp", 25.0), StrategyRun("local", None)]


def test_dataparallel_memory_is_read_on_every_gpu_it_drives() -> None:
    gpu0 = torch.device("cuda", 0)
    assert devices_of("dp", gpu0, gpus=4) == [torch.device("cuda", i) for i in range(4)]
    assert devices_of("ddp", gpu0, gpus=4) == [gpu0]
    assert devices_of("dp", torch.device("cpu"), gpus=4) == [torch.device("cpu")]
