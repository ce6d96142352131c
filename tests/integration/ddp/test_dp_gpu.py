"""`ddp --strategies dp` on a node with 2+ CUDA GPUs (skipped elsewhere; ci/gpu-smoke.sh runs
it): nn.DataParallel over every GPU in one process ends where ddp at one rank ends on the same
batches, and writes a row beside it."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.conftest import run_cli

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2+ CUDA GPUs"),
]


def test_dp_matches_ddp_on_the_same_batches(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run_cli(
        "ddp", "--backend", "nccl", "--world-sizes", "1", "--strategies", "ddp,dp",
        "--batch-size", "64", "--steps", "10", "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    with (out / "results.csv").open() as handle:
        rows = {row["strategy"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"ddp", "dp"}
    assert float(rows["dp"]["max_param_diff"]) < 1e-4
    assert float(rows["dp"]["step_time_us_mean"]) > 0
    # the busiest of the GPUs nn.DataParallel drives (v3: GPU 0 alone)
    assert rows["dp"]["mem_source"] == "cuda_max_allocated"
    assert float(rows["dp"]["peak_mem_bytes"]) > 0
    assert rows["dp"]["comm_baseline"] == ""  # one process: nothing sent between ranks


def test_dp_refuses_more_than_one_rank(tmp_path: Path) -> None:
    result = run_cli(
        "ddp", "--backend", "nccl", "--world-sizes", "2", "--strategies", "dp",
        "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert result.returncode == 2
    assert "--world-sizes 1" in result.stderr
