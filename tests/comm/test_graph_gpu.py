"""--cuda-graph N and --buffers symmetric on a CUDA GPU with NCCL (gpu marker: skipped elsewhere;
ci/gpu-smoke.sh runs them, and its own steps): rows that say graph = true or buffers = symmetric,
--check passing through a replayed graph and on symmetric buffers. Where symmetric memory is not
supported (torch, NCCL or the GPUs), the run stops with one line naming the reason: skipped."""

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
UNSUPPORTED = "--buffers symmetric is not supported here"


def world_sizes() -> str:
    return "1,2" if torch.cuda.device_count() >= 2 else "1"


def nccl_run(out: Path, *argv: str) -> list[dict[str, str]]:
    result = run_cli(
        *argv, "--backend", "nccl", "--world-sizes", world_sizes(), "--check", "--out", str(out)
    )
    text = result.stdout + result.stderr
    if result.returncode != 0 and UNSUPPORTED in text:
        pytest.skip(next(line for line in text.splitlines() if UNSUPPORTED in line))
    assert result.returncode == 0, text[-4000:]
    with open(out / "results.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def test_cuda_graph_rows_replay_and_check(tmp_path: Path) -> None:
    rows = nccl_run(
        tmp_path / "run", "sweep", "--primitives", "allreduce,broadcast,allgather,reducescatter,"
        "alltoall,alltoallv", "--sizes", "4K,16M", "--iters", "10", "--cuda-graph", "5",
    )  # fmt: skip
    assert rows
    for row in rows:
        assert (row["graph"], row["timer"], row["buffers"]) == (
            "true",
            "cuda_event+graph",
            "regular",
        )
        assert row["wrong"] == "0" and row["iters"] == "10" and float(row["time_us_p50"]) > 0


def test_cuda_graph_in_place_checks(tmp_path: Path) -> None:
    rows = nccl_run(
        tmp_path / "run", "sweep", "--primitives", "allgather,reducescatter,alltoall",
        "--placement", "in,out", "--sizes", "1M", "--iters", "4", "--cuda-graph", "2",
    )  # fmt: skip
    assert {row["placement"] for row in rows} == {"in", "out"}
    assert {row["wrong"] for row in rows} == {"0"}


def test_symmetric_buffers_rows_and_check(tmp_path: Path) -> None:
    rows = nccl_run(
        tmp_path / "run", "sweep", "--primitives", "allreduce,allgather,reducescatter",
        "--sizes", "4K,16M", "--dtype", "bfloat16", "--buffers", "symmetric",
    )  # fmt: skip
    assert rows and {(row["buffers"], row["graph"], row["wrong"]) for row in rows} == {
        ("symmetric", "false", "0")
    }


def test_symmetric_buffers_in_a_cuda_graph(tmp_path: Path) -> None:
    rows = nccl_run(
        tmp_path / "run", "allreduce", "--sizes", "64K", "--iters", "8", "--cuda-graph", "3",
        "--buffers", "symmetric",
    )  # fmt: skip
    assert {(row["buffers"], row["graph"], row["wrong"]) for row in rows} == {
        ("symmetric", "true", "0")
    }
