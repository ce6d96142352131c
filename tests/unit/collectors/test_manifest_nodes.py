"""manifest.json at many nodes (#27 §5): the facts the nodes share, and those the ranks of a local
rank share, are stored once (`node_facts`, `rank_facts`: shared + each entry's JSON pointers),
read_manifest gives every node and rank back whole, manifests written before (`nodes` whole) read
as they are, and one node stays as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from distbench.collectors.manifest import read_manifest, write_manifest
from distbench.collectors.manifest_pack import PACKED, pack_manifest, unpack_manifest
from distbench.collectors.nodefacts_diff import node_warnings
from distbench.collectors.schema import MANIFEST_JSON, SCHEMA_VERSION
from distbench.parse import UsageError

NODE_FACTS, RANK_FACTS = PACKED["nodes"], PACKED["ranks"]


def node(k: int, gpus: int = 8, driver: str = "550.54.15") -> dict[str, Any]:
    """A GPU node's facts as nodefacts.py collects them, smaller: UUIDs and host its own."""
    return {
        "host": f"gpu-node{k:03d}",
        "gpus": [
            {"index": str(i), "uuid": f"GPU-{k:04x}-{i}", "driver_version": driver}
            | {"pcie": {"current_link_width": "16", "numa_node": str(i // 4)}}
            for i in range(gpus)
        ],
        "topology": "\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n" * 8,
        "env": {"NCCL_IB_HCA": "mlx5_0,mlx5_1", "NCCL_SOCKET_IFNAME": "bond0"},
        "scheduler": {"name": "slurm", "node_id": str(k), "step_id": None},
    }


def rank(node: int, local: int) -> dict[str, Any]:
    """A rank's facts as merge_facts writes them: its node's host and its GPU's UUID."""
    gpu = {"index": local, "uuid": f"GPU-{node:04x}-{local}", "pci.bus_id": f"0000:{local}"}
    return {"node": node, "host": f"gpu-node{node:03d}", "local_rank": local, "gpu": gpu}


def manifest_of(nodes: dict[str, Any], per_node: int = 0) -> dict[str, Any]:
    ranks = {str(k * per_node + r): rank(k, r) for k in range(len(nodes)) for r in range(per_node)}
    return {"schema_version": SCHEMA_VERSION, "run_id": "r", "nodes": nodes, "ranks": ranks}


def written(tmp_path: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    write_manifest(tmp_path, manifest)
    return json.loads((tmp_path / MANIFEST_JSON).read_text())


def test_128_nodes_store_their_shared_facts_once_and_read_back_whole(tmp_path: Path) -> None:
    manifest = manifest_of({str(k): node(k) for k in range(128)}, per_node=8)
    before = json.dumps(manifest, indent=2)
    on_disk = written(tmp_path, manifest)
    assert list(on_disk) == ["schema_version", "run_id", NODE_FACTS, RANK_FACTS]  # in place
    assert on_disk[RANK_FACTS]["differ"]["17"] == {  # node 2's local rank 1
        "@": "1",
        "/node": 2,
        "/host": "gpu-node002",
        "/gpu/uuid": "GPU-0002-1",
    }
    assert on_disk[NODE_FACTS]["differ"]["5"] == {
        "/host": "gpu-node005",
        **{f"/gpus/{i}/uuid": f"GPU-0005-{i}" for i in range(8)},
        "/scheduler/node_id": "5",
    }

    def size(value: Any) -> int:
        return len(json.dumps(value, indent=2))

    assert size(on_disk[NODE_FACTS]) < size(manifest["nodes"]) / 5  # topology, env ...: once
    assert size(on_disk[RANK_FACTS]) < size(manifest["ranks"]) * 0.75  # each GPU index, bus id
    assert json.dumps(read_manifest(tmp_path), indent=2) == before  # whole, key order too
    assert manifest == json.loads(before)  # writing left the caller's manifest as it was


def test_a_node_that_differs_keeps_its_own_value_and_still_warns(tmp_path: Path) -> None:
    nodes = {str(k): node(k) for k in range(4)}
    nodes["2"] = node(2, driver="535.104.05")
    nodes["3"] = {**node(3), "extra": "only here"}  # other keys: the node's facts whole
    nodes["1"]["gpus"] = nodes["1"]["gpus"][:7]  # a GPU fewer: its list whole
    on_disk = written(tmp_path, manifest_of(nodes))
    differ = on_disk[NODE_FACTS]["differ"]
    assert differ["2"]["/gpus/0/driver_version"] == "535.104.05"
    assert list(differ["3"]) == [""] and differ["3"][""]["extra"] == "only here"
    assert len(differ["1"]["/gpus"]) == 7
    back = read_manifest(tmp_path)
    assert back is not None and back["nodes"] == nodes
    assert any("driver_version" in line for line in node_warnings(back))


def test_one_node_and_manifests_written_before_read_as_they_are(tmp_path: Path) -> None:
    one = manifest_of({"0": node(0)})
    assert written(tmp_path, one) == one
    old = manifest_of({str(k): node(k) for k in range(3)}) | {"schema_version": 3}
    (tmp_path / MANIFEST_JSON).write_text(json.dumps(old))  # 0.2.0 wrote every node whole
    assert read_manifest(tmp_path) == old


def test_damaged_node_facts_are_one_line(tmp_path: Path) -> None:
    on_disk = written(tmp_path, manifest_of({str(k): node(k) for k in range(2)}))
    on_disk[NODE_FACTS]["differ"]["1"] = {"/gpus/9/uuid": "x"}
    (tmp_path / MANIFEST_JSON).write_text(json.dumps(on_disk))
    with pytest.raises(UsageError, match="its packed node or rank facts are damaged"):
        read_manifest(tmp_path)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "a", "~", "/", "~1"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "x/y", "~0", ""]), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(
    max_examples=int(os.environ.get("DISTBENCH_FUZZ_EXAMPLES", "30")), deadline=None
)  # CI: 300
@given(st.lists(JSON, min_size=2, max_size=5), st.lists(JSON, min_size=0, max_size=6))
@example([{"a": True}, {"a": 1}, {"a": True}], [])  # equal in Python, not the same fact
@example([{"b": 0, "a": 0}, {"a": 0, "b": 0}, {"a": 0, "b": 0}], [])  # key order kept
@example([{"x/y": [1, {"~0": 2}]}, {"x/y": [1, {"~0": 3}]}], [])  # escaped '/' and '~'
@example([[1, 2], [1, 2, 3], [1, 2]], [])  # a list of another length
@example([1, 1], [None, 1, True, 2, "@", [3]])  # ranks of two local ranks and of none
def test_any_facts_read_back_exactly(facts: list[Any], ranks: list[Any]) -> None:
    """Whatever the nodes and ranks hold (1 and True, '/' and '~' in keys, lists of other
    lengths, ranks of some local ranks and of none): packed, written as JSON and read, each
    entry is exactly its own."""
    manifest = manifest_of({str(k): value for k, value in enumerate(facts)})
    for r, value in enumerate(ranks):  # local ranks 0 and 1, or none (a leaf, a list)
        manifest["ranks"][str(r)] = {"local_rank": r % 2, "x": value} if r % 3 else value
    text = json.dumps(pack_manifest(manifest))
    assert json.dumps(unpack_manifest(json.loads(text))) == json.dumps(manifest)
