"""A run whose output is closed (`distbench ... | head`) is an interruption, not a completed run:
before, the first write after the reader left raised BrokenPipeError, the launch was stopped,
and the manifest said "completed" over a third of the rows, which --resume then refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from distbench.collectors.sink import read_rows
from tests.conftest import run_cli
from tests.integration.launch.test_faults import assert_rows_parse

SIZES = "1K,2K,4K,8K,16K,32K,64K"


def test_a_closed_output_keeps_the_rows_and_the_run_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = ["allreduce", "--backend", "gloo", "--world-sizes", "2", "--sizes", SIZES,
               "--iters", "300", "--warmup", "1", "--trials", "2", "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "distbench", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,  # the progress lines: one per measurement
        cwd=tmp_path,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    deadline = time.monotonic() + 120
    while len(read_rows(out / "results.csv")) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.stderr is not None and proc.stdout is not None
    proc.stderr.close()  # the reader leaves, as `2>&1 | head` does
    proc.stdout.read()
    assert proc.wait(timeout=60) == 141  # 128 + SIGPIPE, as a shell reports it
    kept = assert_rows_parse(out)
    assert 2 <= len(kept) < 7, "the output must close mid-run"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "interrupted", manifest
    assert manifest["stopped_by"].startswith("output closed"), manifest["stopped_by"]
    assert not list((out / "logs").glob("*.alive")), "a stopped rank's heartbeat was left"

    resumed = run_cli("allreduce", "--resume", str(out), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    rows = assert_rows_parse(out)
    assert [r["measurement"] for r in rows] == [f"ws2/i{k}" for k in range(7)]
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["status"], manifest["stopped_by"]) == ("completed", "finished")
    assert manifest["resumes"][-1]["previous_stopped_by"].startswith("output closed")
