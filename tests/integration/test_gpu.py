"""The NCCL / CUDA path on machines with a GPU (gpu marker: skipped elsewhere; ci/gpu-smoke.sh runs
this file by name, last, after its own steps): NCCL at world size 1 with both timers, --check,
the host's enqueue time and the manifest's GPU matched by its UUID, in one launch. gloo on CUDA
tensors, ranks sharing a GPU, is the smoke's gloo-cuda step."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import torch

from tests.conftest import run_cli

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]


def rows_of(out: Path) -> list[dict[str, str]]:
    with open(out / "results.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def test_nccl_at_one_rank_timers_check_enqueue_and_gpu_uuid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With 2+ GPUs the launch sees only the last one (CUDA_VISIBLE_DEVICES): torch's device 0
    is then nvidia-smi's last GPU, and the manifest must name that one."""
    last = torch.cuda.device_count() - 1
    expected = f"GPU-{torch.cuda.get_device_properties(last).uuid}"
    if last > 0:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", str(last))
    out = tmp_path / "run"
    result = run_cli(
        "allreduce", "--backend", "nccl", "--world-sizes", "1", "--sizes", "4K,16M",
        "--mode", "both", "--check", "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr + result.stdout
    rows = rows_of(out)
    assert len(rows) == 4
    for row in rows:
        assert row["backend"] == "nccl" and row["device"] == "cuda" and row["wrong"] == "0"
        # latency mode: one op after an idle stream, so the sample includes its host dispatch
        timer = "cuda_event+dispatch" if row["mode"] == "latency" else "cuda_event"
        assert row["timer"] == timer
        assert row["algbw_GBps"] == "" and row["busbw_GBps"] == ""  # one rank: nothing moves
        assert float(row["time_us_p50"]) > 0
        assert 0 < float(row["enqueue_us"]) < 10_000  # the host's time to issue one op
        assert row["dispatch_bound"] in ("true", "false")
    gpu = json.loads((out / "manifest.json").read_text())["ranks"]["0"]["gpu"]
    assert gpu["uuid"].lower() == expected.lower(), gpu
    if gpu.get("smi_index") not in (None, "unknown"):  # nvidia-smi answered
        assert gpu["smi_index"] == str(last), gpu
