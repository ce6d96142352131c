"""The NCCL / CUDA path on machines with a GPU (skipped elsewhere; ci/gpu-smoke.sh runs it)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import torch

from tests.conftest import run_cli

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]


def test_allreduce_nccl_uses_cuda_events(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run_cli(
        "allreduce",
        "--backend",
        "nccl",
        "--world-sizes",
        "1",
        "--sizes",
        "1M,16M",
        "--mode",
        "both",
        "--check",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr + result.stdout
    with open(out / "results.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 4
    for row in rows:
        assert row["backend"] == "nccl" and row["device"] == "cuda"
        # latency mode: one op after an idle stream, so the sample includes its host dispatch
        timer = "cuda_event+dispatch" if row["mode"] == "latency" else "cuda_event"
        assert row["timer"] == timer
        assert row["wrong"] == "0"
        assert row["algbw_GBps"] == "" and row["busbw_GBps"] == ""  # one rank: nothing moves
        assert float(row["time_us_p50"]) > 0


def test_gloo_on_cuda_tensors(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run_cli(
        "allreduce",
        "--backend",
        "gloo",
        "--device",
        "cuda",
        "--world-sizes",
        "1",
        "--sizes",
        "64K",
        "--check",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr + result.stdout
    with open(out / "results.csv", newline="") as handle:
        row = next(csv.DictReader(handle))
    assert row["device"] == "cuda" and row["timer"] == "cuda_event" and row["wrong"] == "0"
