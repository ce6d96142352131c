"""Two "nodes" on one machine. The half that launches or runs for seconds; the in-process half, and
the file's whole story: tests/unit/launch/test_multinode.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from distbench.collectors.sink import read_rows
from tests.conftest import free_port

TINY = ["--backend", "gloo", "--iters", "3", "--warmup", "1", "--trials", "2", "--timeout", "60"]


def run_nodes(
    tmp_path: Path, command: list[str], per_node: list[list[str]], shared: bool = False
) -> list[subprocess.CompletedProcess[str]]:
    """Start one distbench per node at once (own --out each, or one shared); wait for all."""
    procs = []
    for node, extra in enumerate(per_node):
        out = tmp_path / ("shared" if shared else f"node{node}")
        argv = [sys.executable, "-m", "distbench", *command, "--out", str(out)]
        procs.append(
            subprocess.Popen(
                [*argv, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        )
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done


@pytest.mark.slow
def test_two_nodes_c10d_rendezvous_on_loopback_one_writer(tmp_path: Path) -> None:
    endpoint = f"127.0.0.1:{free_port()}"
    common = ["allreduce", *TINY, "--sizes", "1K,64K", "--nnodes", "2", "--nproc-per-node", "1"]
    common += ["--rdzv-endpoint", endpoint, "--rdzv-id", "loopback-test"]
    results = run_nodes(tmp_path, common, [[], []])
    for result in results:
        assert result.returncode == 0, result.stderr
    writers = [n for n in range(2) if (tmp_path / f"node{n}" / "results.csv").exists()]
    assert len(writers) == 1  # only global rank 0 writes
    rows = read_rows(tmp_path / f"node{writers[0]}" / "results.csv")
    assert [(r["world_size"], r["nnodes"], r["ranks"]) for r in rows] == [("2", "2", "0-1")] * 2
    other = 1 - writers[0]
    assert "did not hold global rank 0" in results[other].stderr
    # every rank knows its node: torchrun's node rank, in its log
    logs = sorted((tmp_path / f"node{other}" / "logs").glob("ws2-rank*.log"))
    assert len(logs) == 1 and "node=1/2" in logs[0].read_text()


@pytest.mark.slow
def test_static_rendezvous_node0_writes_send_recv_pairs_across_nodes(tmp_path: Path) -> None:
    endpoint = f"127.0.0.1:{free_port()}"
    common = ["sendrecv", *TINY, "--sizes", "1K", "--pattern", "pingpong", "--pairs", "all"]
    common += ["--nnodes", "2", "--nproc-per-node", "2", "--rdzv-endpoint", endpoint]
    nodes = [["--node-rank", "0"], ["--node-rank", "1"]]
    results = run_nodes(tmp_path, common, nodes, shared=True)  # one --out, as on a shared fs
    for result in results:
        assert result.returncode == 0, result.stderr
    shared = tmp_path / "shared"
    assert not (shared / "node1" / "results.csv").exists()
    assert sorted(p.name for p in (shared / "node1" / "logs").glob("*rank*")) == [
        "ws4-rank2.log",
        "ws4-rank3.log",
    ]
    rows = read_rows(shared / "results.csv")
    pairs = {(int(r["src"]), int(r["dst"])) for r in rows}
    assert pairs == {(s, d) for s in range(4) for d in range(4) if s != d}
    # ranks 0,1 on node 0 and 2,3 on node 1: both kinds of pairs were measured
    intra = {p for p in pairs if p[0] // 2 == p[1] // 2}
    assert intra == {(0, 1), (1, 0), (2, 3), (3, 2)}
    assert all(r["nnodes"] == "2" and r["world_size"] == "4" for r in rows)
