"""A two-loopback-node run: global rank 0's manifest.json holds `nodes` (one entry per node,
each collected by that node's local rank 0) and a `ranks` map (rank -> node, host, local rank,
GPU, CPU affinity, NUMA node)."""

from __future__ import annotations

from pathlib import Path

import pytest

from distbench.collectors.manifest import read_manifest
from tests.launch.test_multinode import TINY, free_port, run_nodes


@pytest.mark.slow
def test_two_nodes_write_nodes_and_ranks(tmp_path: Path) -> None:
    endpoint = f"127.0.0.1:{free_port()}"
    common = ["allreduce", *TINY, "--sizes", "1K", "--nnodes", "2", "--nproc-per-node", "2"]
    common += ["--rdzv-endpoint", endpoint, "--rdzv-id", "node-facts-test"]
    results = run_nodes(tmp_path, common, [[], []])
    for result in results:
        assert result.returncode == 0, result.stderr
    writer = next(n for n in range(2) if (tmp_path / f"node{n}" / "results.csv").exists())
    manifest = read_manifest(tmp_path / f"node{writer}")  # the nodes' shared facts stored once
    assert manifest is not None
    nodes, ranks = manifest["nodes"], manifest["ranks"]
    assert sorted(nodes) == ["0", "1"]
    for facts in nodes.values():
        assert facts["gpus"] == "none" and facts["infiniband"] == "none"
        assert {"host", "net", "gpudirect_rdma", "nccl", "env", "container", "scheduler"} <= set(
            facts
        )
    assert sorted(ranks, key=int) == ["0", "1", "2", "3"]
    assert [ranks[r]["node"] for r in ("0", "1", "2", "3")] == [0, 0, 1, 1]
    assert [ranks[r]["local_rank"] for r in ("0", "1", "2", "3")] == [0, 1, 0, 1]
    assert all(ranks[r]["gpu"] == "none" and ranks[r]["cpu_affinity"] for r in ranks)
