"""--nccl-trace: NCCL's TUNING lines of both documented formats and its [Symmetric] lines parsed
exactly, unknown ones left out. The half that launches or runs for seconds; the in-process half, and
the file's whole story: tests/unit/comm/test_nccl_trace.py."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import INJECT

INJECT = INJECT / "nccl_log"


def _run(tmp_path: Path, name: str, inject: bool) -> list[dict[str, str]]:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if inject:
        env["PYTHONPATH"] = os.pathsep.join([str(INJECT), env.get("PYTHONPATH", "")])
        env["DISTBENCH_TEST_NCCL_LOG"] = "1"
    out = tmp_path / name
    argv = [sys.executable, "-m", "distbench", "allreduce", "--world-sizes", "2", "--sizes"]
    argv += ["1K,64K", "--iters", "2", "--warmup", "1", "--trials", "2", "--nccl-trace"]
    done = subprocess.run(
        [*argv, "--out", str(out)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["worker_env"]["NCCL_DEBUG"] == "INFO"  # the rows say tracing was on
    warned = "NCCL WARN distbench-test: a warning NCCL wrote to its own log"
    assert (warned in (out / "logs" / "ws2-rank0.log").read_text()) == inject
    with open(out / "results.csv", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_gloo_run_with_trace_leaves_columns_empty_and_fills_them_from_a_log(
    tmp_path: Path,
) -> None:
    plain = _run(tmp_path, "plain", inject=False)
    assert [(r["nccl_algo"], r["nccl_proto"], r["nccl_nchannels"]) for r in plain] == [
        ("", "", "")
    ] * 2
    logged = _run(tmp_path, "logged", inject=True)
    assert [
        (r["size_bytes"], r["nccl_algo"], r["nccl_proto"], r["nccl_nchannels"]) for r in logged
    ] == [
        ("1024", "RING", "SIMPLE", "4"),
        ("65536", "RING", "SIMPLE", "4"),
    ]
    assert {(r["nccl_symmetric"], r["dispatch_bound"], r["enqueue_us"]) for r in logged} == {
        ("false", "", "")  # gloo: no enqueue time, so no dispatch verdict
    }
