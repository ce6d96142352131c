"""Labels that tell the truth, on real gloo process groups launched by the real CLI: subgroup rows
state the nodes they span, a one-rank row moves nothing, throughput rows have no tail
percentiles, samples carry their run, the manifest holds the workers' environment and the git
dirty flag, oversubscribed CPU ranks are warned about, and report and compare read the empty
cells."""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from distbench.collectors.sink import read_rows
from tests.conftest import TwoNodes, run_in_process

TINY = ["--backend", "gloo", "--iters", "3", "--warmup", "1", "--trials", "2", "--timeout", "60"]


def empty(cell: str) -> bool:
    return cell == ""


@pytest.mark.slow
def test_subgroup_rows_state_the_nodes_and_hosts_they_span(two_nodes_2x2: TwoNodes) -> None:
    """The session's 2-node run (tests/conftest.py): 2 x 2 ranks, world sizes 2 and 4, 2 sizes."""
    run, endpoint = two_nodes_2x2.out, two_nodes_2x2.endpoint
    host = socket.gethostname()
    rows = read_rows(run / "results.csv")
    placed = [(r["world_size"], r["ranks"], r["nnodes"], r["hosts"]) for r in rows]
    # ranks 0-1 sit on node 0: the 2-rank rows span one node (they said nnodes=2 before)
    assert placed == [("2", "0-1", "1", host)] * 2 + [("4", "0-3", "2", f"{host}+{host}")] * 2
    samples = read_rows(run / "samples.csv")
    assert {s["run_id"] for s in samples} == {run.name}
    manifest = json.loads((run / "manifest.json").read_text())
    env = manifest["worker_env"]
    assert env["MASTER_PORT"] == endpoint.split(":")[1] and "OMP_NUM_THREADS" in env
    assert not {"RANK", "LOCAL_RANK", "GROUP_RANK"} & set(env)
    assert manifest["launches"][0]["worker_env"] == env


def one_core() -> None:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
def test_one_rank_moves_nothing_and_throughput_has_no_tails(tmp_path: Path) -> None:
    run = tmp_path / "run"
    command = [sys.executable, "-m", "distbench", "allreduce", *TINY, "--sizes", "1K,64K"]
    command += ["--world-sizes", "1,2", "--mode", "both", "--out", str(run)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    # two ranks on one core (taskset): the warning's case, cheaply
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, env=env, preexec_fn=one_core
    )
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "CPU core" in line]
    assert warnings == [
        "warning: 2 ranks on 1 CPU core: ranks take turns on a core, so times include waiting "
        "for the scheduler (use --world-sizes up to 1 for clean numbers)"
    ]
    assert "# world size 1: nothing moves between ranks, so no bandwidth (-)" in done.stdout
    rows = read_rows(run / "results.csv")
    assert len(rows) == 8
    for row in rows:
        alone = row["world_size"] == "1"
        assert empty(row["algbw_GBps"]) == alone and empty(row["busbw_GBps"]) == alone
        tails = row["mode"] == "latency"
        assert empty(row["time_us_p95"]) != tails and empty(row["time_us_p99"]) != tails
        assert row["timer"] == "perf_counter" and row["nnodes"] == "1"
        assert row["hosts"] == socket.gethostname()
    assert {s["run_id"] for s in read_rows(run / "samples.csv")} == {run.name}
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["worker_env"]["OMP_NUM_THREADS"] == "1"
    assert isinstance(manifest["distbench_git_dirty"], bool | None)

    # the empty cells are read by report and compare, which say '—' or leave the row out
    report = run_in_process("report", str(run), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    text = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    key = text.split("**Key results**")[1].split("\n\n")[1].splitlines()
    one_rank = [line for line in key if "| all_reduce | 1 |" in line]  # cpu, 1 node: the note
    assert len(one_rank) == 2 and all(line.endswith("| — | — |") for line in one_rank)
    for metric in ("time_us_p95", "busbw_GBps"):
        compare = run_in_process("compare", str(run), str(run), "--metric", metric)
        assert compare.returncode == 0, compare.stdout + compare.stderr
        assert "Traceback" not in compare.stderr
    assert math.isfinite(float(rows[-1]["time_us_p50"]))
