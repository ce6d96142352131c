"""`distbench overlap` on NCCL (skipped without a GPU; ci/gpu-smoke.sh runs it): the collective
from its own stream beside the matmul on the current one, CUDA-event timers, the check passing."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
import torch

from tests.conftest import run_cli

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]


def test_overlap_on_nccl_times_with_cuda_events_and_checks(tmp_path: Path) -> None:
    world = "2" if torch.cuda.device_count() >= 2 else "1"
    out = tmp_path / "run"
    done = run_cli(
        "overlap", "--backend", "nccl", "--world-sizes", world, "--sizes", "1M,64M",
        "--primitives", "allreduce,allgather", "--compute", "2048", "--mode", "both", "--check",
        "--out", str(out), "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    rows = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert len(rows) == 2 * 2 * 2
    assert (rows["wrong"] == 0).all() and (rows["device"] == "cuda").all()
    assert set(rows["timer"]) == {"cuda_event", "cuda_event+dispatch"}
    for row in rows.itertuples():
        assert all(math.isfinite(float(v)) for v in (row.overlap_efficiency, row.comm_slowdown))
        # never much worse than one after the other: both streams make progress
        assert row.t_both_us <= 1.25 * (row.t_compute_us + row.t_comm_us), row
