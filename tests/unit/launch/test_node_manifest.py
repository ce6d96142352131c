"""A two-loopback-node run: global rank 0's manifest.json holds `nodes` (one entry per node,
each collected by that node's local rank 0) and a `ranks` map (rank -> node, host, local rank,
GPU, CPU affinity, NUMA node). How they get there (groups.share_node_facts): on a real gloo group
of 3 "nodes", only what rank 0 writes moves, the bytes each rank sends counted against the
formula; a node's block unpacks to its ranks; and the bytes per rank at 1,024 ranks."""

from __future__ import annotations

import json
import pickle

import pytest

from ci import scale_data
from distbench.collectors.nodefacts import pack_node_facts, pack_rank_facts, unpack_node_block

# Sharing the facts: only what rank 0 needs moves (#27: no global object gather).


def traffic(rank: int, world: int, per_node: int, width: int, facts_width: int) -> tuple[int, int]:
    """(bytes sent, bytes received) point to point by `rank` (groups.share_node_facts): a rank
    sends its `width`-byte facts to its node's local rank 0, which sends its node's block
    (per_node x width + facts_width) to rank 0."""
    block = per_node * width + facts_width
    if rank % per_node:
        return width, 0
    heard = (per_node - 1) * width
    if rank:
        return block, heard
    return 0, heard + (world // per_node - 1) * block


def gathered_before(world: int, pickled: int) -> int:
    """Bytes each rank received from the others in 0.2.0's all_gather_object: every rank's size
    (int64) and its pickle padded to the largest (`pickled`)."""
    return (world - 1) * (pickled + 8)


def test_a_node_block_unpacks_to_its_ranks_and_a_swapped_slot_is_refused() -> None:
    """An 8-GPU node of ci/scale_data (its facts compress ~6x): the block rank 0 receives, zero
    padding included, gives back each rank's facts and the node's; slots out of local rank order
    (a wrong sender) raise instead of filing a rank under another."""
    node = scale_data.node_facts(3)
    ranks = [{"host": node["host"], "local_rank": k, "gpu": {"index": k}} for k in range(8)]
    packed = [pack_rank_facts(r) for r in ranks]
    width = max(map(len, packed)) + 5
    facts = pack_node_facts(3, node)
    assert len(facts) * 4 < len(json.dumps(node))
    block = b"".join(p.ljust(width, b"\0") for p in packed) + facts.ljust(len(facts) + 7, b"\0")
    found = unpack_node_block(block, width, 8)
    assert found == [(3, r, node if k == 0 else None) for k, r in enumerate(ranks)]
    swapped = packed[1].ljust(width, b"\0") + packed[0].ljust(width, b"\0")
    with pytest.raises(RuntimeError, match="slot 0 holds local rank 1"):
        unpack_node_block(
            swapped + b"".join(p.ljust(width, b"\0") for p in packed[2:]) + facts, width, 8
        )


def test_bytes_per_rank_at_1024_ranks(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/performance.md's figures: 128 nodes x 8 GPUs with ci/scale_data's node facts, by
    the encodings share_node_facts sends and 0.2.0's pickle (`pytest -s -k 1024_ranks`)."""
    world, per_node = scale_data.RANKS, scale_data.GPUS
    cluster = scale_data.cluster_facts()
    own = [{k: v for k, v in f.items() if k != "node"} for f in cluster["ranks"].values()]
    width = max(len(pack_rank_facts(f)) for f in own)
    facts_width = max(len(pack_node_facts(int(k), n)) for k, n in cluster["nodes"].items())
    pickled = max(
        len(pickle.dumps((int(k), own[int(k) * per_node], n))) for k, n in cluster["nodes"].items()
    )
    member, leader, root = (traffic(r, world, per_node, width, facts_width) for r in (1, 8, 0))
    before = gathered_before(world, pickled)
    total = sum(sum(traffic(r, world, per_node, width, facts_width)) for r in range(world)) // 2
    with capsys.disabled():
        print(
            f"\n{world} ranks, {per_node} a node: rank facts {width} B, node facts {facts_width} B"
            f" compressed, 0.2.0 pickle {pickled} B\n"
            f"now: a rank sends {member[0]} B; a node's local rank 0 receives {leader[1]} B and"
            f" sends {leader[0]} B; rank 0 receives {root[1]:,} B; in all {total:,} B\n"
            f"0.2.0: every rank received {before:,} B; in all {world * before:,} B"
        )
    assert root[1] < before / 10 and member[0] < 300
