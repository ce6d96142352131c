"""A two-loopback-node run. The half that launches or runs for seconds; the in-process half, and the
file's whole story: tests/unit/launch/test_node_manifest.py."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest
import torch

from distbench.collectors.manifest import read_manifest
from distbench.collectors.nodefacts import pack_node_facts, pack_rank_facts
from distbench.collectors.schema import worker_facts_path
from distbench.groups import record_torch_facts, share_node_facts
from tests.conftest import TwoNodes, run_on_gloo_ranks
from tests.unit.launch.test_node_manifest import gathered_before, traffic


@pytest.mark.slow
def test_two_nodes_write_nodes_and_ranks(two_nodes_2x2: TwoNodes) -> None:
    """The session's 2-node run (tests/conftest.py: static rendezvous, one shared --out; c10d
    rendezvous is test_multinode.py's): the nodes' shared facts stored once, by global rank 0."""
    manifest = read_manifest(two_nodes_2x2.out)
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


def test_facts_reach_rank_0_alone_node_by_node(tmp_path: Path) -> None:
    """6 gloo ranks as 3 "nodes" of 2: rank 0 writes every node's and rank's facts, and each rank
    sent and received exactly the bytes of the two hops (0.2.0: every rank received every
    rank's pickle)."""
    world, per_node = 6, 2

    def share(rank: int, size: int) -> tuple[int, int]:
        local = rank % per_node
        os.environ.update(
            GROUP_RANK=str(rank // per_node), LOCAL_RANK=str(local), LOCAL_WORLD_SIZE=str(per_node)
        )
        if local == 0:  # as the worker does: the torch facts rank 0 adds `nodes` and `ranks` to
            record_torch_facts(tmp_path, size)
        moved = share_node_facts(tmp_path, size, local, torch.device("cpu"))
        return moved.sent, moved.received

    moved = run_on_gloo_ranks(share, world, tmp_path / "store")
    facts = json.loads(worker_facts_path(tmp_path, world).read_text())
    assert "torch" in facts  # beside the torch facts
    nodes, ranks = facts["nodes"], facts["ranks"]
    assert sorted(nodes) == ["0", "1", "2"]
    assert all({"host", "gpus", "net", "env", "scheduler"} <= set(n) for n in nodes.values())
    assert [(ranks[str(r)]["node"], ranks[str(r)]["local_rank"]) for r in range(world)] == [
        (0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1),
    ]  # fmt: skip
    own = [{k: v for k, v in ranks[str(r)].items() if k != "node"} for r in range(world)]
    width = max(len(pack_rank_facts(f)) for f in own)  # what each rank packed
    facts_width = max(len(pack_node_facts(int(k), n)) for k, n in nodes.items())
    assert moved == [traffic(r, world, per_node, width, facts_width) for r in range(world)]
    pickled = max(
        len(pickle.dumps((r // per_node, ranks[str(r)], nodes[str(r // per_node)])))
        for r in range(0, world, per_node)
    )
    assert max(received for _, received in moved[1:]) < gathered_before(world, pickled) / 4
