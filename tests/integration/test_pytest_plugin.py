"""The distbench pytest plugin: cheap to load, rank 0 alone saves, and under a real 2-rank gloo
torchrun pytest-benchmark saves exactly one JSON with the extra_info; through ci/bench-tests.sh
only rank 0 prints, and --benchmark-compare-fail ends the output with one line per regressed
benchmark, no traceback and no torchrun banner."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT as REPO

PLAIN_BENCHMARK = """
def test_sum(benchmark):
    benchmark.pedantic(sum, args=([1, 2, 3],), rounds=3)
"""

COMM_BENCHMARK = """
import os

def test_all_reduce(comm_benchmark):
    result = comm_benchmark("all_reduce", size=os.environ["BENCH_SIZE"], rounds=5, warmup_rounds=1)
    assert result.world_size == 2
"""


def run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")}
    full_env.update(env)
    full_env.setdefault("OMP_NUM_THREADS", "1")
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=180
    )


def saved_json(storage: Path) -> list[Path]:
    return sorted(storage.rglob("*.json"))


def test_plugin_is_registered_and_imports_without_torch() -> None:
    names = [e.value for e in importlib.metadata.entry_points(group="pytest11")]
    assert "distbench.pytest_plugin" in names
    code = "import sys, distbench.pytest_plugin; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_examples_skip_outside_torchrun(tmp_path: Path) -> None:
    result = run(["-m", "pytest", str(REPO / "ci" / "test_bench_allreduce.py"), "-q"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 skipped" in result.stdout


@pytest.mark.parametrize(("rank", "files"), [("0", 1), ("1", 0)])
def test_only_rank_zero_saves(tmp_path: Path, rank: str, files: int) -> None:
    (tmp_path / "test_plain.py").write_text(PLAIN_BENCHMARK)
    storage = tmp_path / "storage"
    args = ["-m", "pytest", "test_plain.py", "-q", "-p", "no:cacheprovider"]
    args += ["--benchmark-autosave", f"--benchmark-storage={storage}"]
    result = run(args, tmp_path, RANK=rank)
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(saved_json(storage)) == files


@pytest.mark.slow
def test_torchrun_group_saves_one_json_and_compare_fail_works(tmp_path: Path) -> None:
    (tmp_path / "test_comm.py").write_text(COMM_BENCHMARK)
    storage = tmp_path / "storage"
    torchrun = ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
    pytest_args = ["-m", "pytest", "test_comm.py", "-q", "-p", "no:cacheprovider"]
    pytest_args.append(f"--benchmark-storage={storage}")

    first = run([*torchrun, *pytest_args, "--benchmark-autosave"], tmp_path, BENCH_SIZE="1K")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    (path,) = saved_json(storage)
    (bench,) = json.loads(path.read_text())["benchmarks"]
    info = bench["extra_info"]
    assert (info["size_bytes"], info["world_size"], info["primitive"]) == (1024, 2, "all_reduce")
    assert info["busbw_GBps"] > 0 and info["busbw_factor"] == 1.0
    assert bench["stats"]["rounds"] == 5

    # 16 MiB against 1 KiB: far past 50 % slower. Through ci/bench-tests.sh: exit 1, the verdict
    # last, one line per regressed benchmark, no traceback, one pytest report (rank 0's).
    slower = [str(REPO / "ci" / "bench-tests.sh"), "test_comm.py", f"--benchmark-storage={storage}"]
    slower += ["-q", "--benchmark-compare", "--benchmark-compare-fail=median:50%"]
    second = subprocess.run(
        ["bash", *slower], cwd=tmp_path, capture_output=True, text=True, timeout=180,
        env={**{k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")},
             "BENCH_SIZE": "16M", "NPROC": "2", "PYTHON": sys.executable, "OMP_NUM_THREADS": "1",
             "DISTBENCH_RANK_LOGS": str(tmp_path / "ranks")},
    )  # fmt: skip
    output = second.stdout + second.stderr
    assert second.returncode == 1, output[-3000:]
    lines = second.stdout.strip().splitlines()
    assert lines[-2] == "1 benchmark(s) regressed:"
    assert lines[-1].startswith("REGRESSED test_all_reduce (0001_") and "median" in lines[-1]
    assert "Traceback" not in output and "ChildFailedError" not in output
    assert output.count("passed") == 1  # rank 1's pytest report went to its log
    assert "passed" in (tmp_path / "ranks" / "rank1.log").read_text()
    assert len(saved_json(storage)) == 1
