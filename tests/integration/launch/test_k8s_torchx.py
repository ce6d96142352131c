"""Kubernetes and torchx (#14 §3). The half that launches or runs for seconds; the in-process half,
and the file's whole story: tests/unit/launch/test_k8s_torchx.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.unit.launch.test_k8s_torchx import HAS_TORCHX


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TORCHX or shutil.which("torchx") is None, reason="torchx not installed")
def test_torchx_runs_distbench_on_local_cwd_with_two_cpu_ranks(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(
        [
            "torchx",
            "run",
            "-s",
            "local_cwd",
            "distbench.sweep",
            "--primitives",
            "allreduce",
            "--sizes",
            "1K",
            "--world_sizes",
            "2",
            "--backend",
            "gloo",
            "--out",
            str(tmp_path / "run"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = (tmp_path / "run" / "results.csv").read_text().splitlines()
    header = rows[0].split(",")
    assert len(rows) == 2
    row = dict(zip(header, rows[1].split(","), strict=True))
    assert (row["primitive"], row["world_size"], row["backend"]) == ("all_reduce", "2", "gloo")


@pytest.mark.slow
def test_a_run_under_kubernetes_records_it_in_the_manifest(tmp_path: Path) -> None:
    pod = {
        "KUBERNETES_SERVICE_HOST": "10.0.0.1",
        "HOSTNAME": "bench-node-0-0",
        "POD_NAMESPACE": "perf",
        "JOBSET_NAME": "bench",
        "JOB_COMPLETION_INDEX": "0",
        "NODE_NAME": "gpu-node-7",
    }
    saved = {k: os.environ.get(k) for k in pod}
    os.environ.update(pod)
    try:
        done = run_cli(
            "allreduce",
            "--backend",
            "gloo",
            "--sizes",
            "1K",
            "--world-sizes",
            "2",
            "--out",
            str(tmp_path / "run"),
            "--quiet",
        )
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key)
            else:
                os.environ[key] = value
    assert done.returncode == 0, done.stderr
    scheduler = json.loads((tmp_path / "run" / "manifest.json").read_text())["scheduler"]
    assert scheduler == {
        "name": "kubernetes",
        "pod": "bench-node-0-0",
        "namespace": "perf",
        "job_name": "bench",
        "job_index": "0",
        "node": "gpu-node-7",
    }


def test_dry_run_launches_nothing_and_imports_no_torch(tmp_path: Path) -> None:
    code = (
        "import sys; from distbench.cli.app import run_cli; "
        f"c = run_cli(['allreduce', '--backend', 'gloo', '--out', {str(tmp_path / 'r')!r}, "
        "'--dry-run']); print(c, 'torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.strip().splitlines()[-1] == "0 False", done.stderr
    assert not (tmp_path / "r").exists()
