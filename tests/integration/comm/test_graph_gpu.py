"""--cuda-graph N and --buffers symmetric on a CUDA GPU with NCCL (gpu marker: skipped elsewhere;
ci/gpu-smoke.sh runs this file by name, after its own steps): rows that say graph = true or
buffers = symmetric, --check passing through a replayed graph and on symmetric buffers, the host's
enqueue time per op of a replay, and what NCCL ran on symmetric buffers (nccl_symmetric).
Symmetric buffers need 2 GPUs (the CLI refuses world size 1); where symmetric memory is not
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


def nccl_run(out: Path, *argv: str, world_sizes: str = "") -> list[dict[str, str]]:
    sizes = world_sizes or ("1,2" if torch.cuda.device_count() >= 2 else "1")
    result = run_cli(
        *argv, "--backend", "nccl", "--world-sizes", sizes, "--check", "--out", str(out)
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
        assert 0 < float(row["enqueue_us"]) < 10_000  # one replay's host time / 10 ops


def test_cuda_graph_in_place_checks(tmp_path: Path) -> None:
    """all_gather and reduce_scatter in place (in-place alltoall is refused on NCCL)."""
    rows = nccl_run(
        tmp_path / "run", "sweep", "--primitives", "allgather,reducescatter",
        "--placement", "in,out", "--sizes", "1M", "--iters", "4", "--cuda-graph", "2",
    )  # fmt: skip
    assert {row["placement"] for row in rows} == {"in", "out"}
    assert {row["wrong"] for row in rows} == {"0"}


needs_two = pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")


@needs_two
def test_symmetric_buffers_rows_check_and_what_nccl_ran(tmp_path: Path) -> None:
    rows = nccl_run(
        tmp_path / "run", "sweep", "--primitives", "allreduce,allgather,reducescatter",
        "--sizes", "4K,16M", "--dtype", "bfloat16", "--buffers", "symmetric", world_sizes="2",
    )  # fmt: skip
    assert rows and {(row["buffers"], row["graph"], row["wrong"]) for row in rows} == {
        ("symmetric", "false", "0")
    }
    # --buffers symmetric turns --nccl-trace on: every row says which kernels NCCL ran
    assert {row["nccl_symmetric"] for row in rows} <= {"true", "false"}, rows


@needs_two
def test_symmetric_buffers_in_a_cuda_graph(tmp_path: Path) -> None:
    rows = nccl_run(
        tmp_path / "run", "allreduce", "--sizes", "64K", "--iters", "8", "--cuda-graph", "3",
        "--buffers", "symmetric", world_sizes="2",
    )  # fmt: skip
    assert {(row["buffers"], row["graph"], row["wrong"]) for row in rows} == {
        ("symmetric", "true", "0")
    }
