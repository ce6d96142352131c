"""manifest.json at many nodes (#27 §5): the facts every node shares are stored once
(`node_facts`: shared + each node's JSON pointers), read_manifest gives every node back whole,
manifests written before (`nodes` whole) read as they are, and one node stays as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from distbench.collectors.manifest import (
    NODE_FACTS,
    pack_nodes,
    read_manifest,
    unpack_nodes,
    write_manifest,
)
from distbench.collectors.nodefacts_diff import node_warnings
from distbench.collectors.schema import MANIFEST_JSON, SCHEMA_VERSION
from distbench.parse import UsageError


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


def manifest_of(nodes: dict[str, Any]) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "run_id": "r", "nodes": nodes, "ranks": {}}


def written(tmp_path: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    write_manifest(tmp_path, manifest)
    return json.loads((tmp_path / MANIFEST_JSON).read_text())


def test_128_nodes_store_their_shared_facts_once_and_read_back_whole(tmp_path: Path) -> None:
    manifest = manifest_of({str(k): node(k) for k in range(128)})
    before = json.dumps(manifest, indent=2)
    on_disk = written(tmp_path, manifest)
    assert list(on_disk) == ["schema_version", "run_id", NODE_FACTS, "ranks"]  # in its place
    assert on_disk[NODE_FACTS]["differ"]["5"] == {
        "/host": "gpu-node005",
        **{f"/gpus/{i}/uuid": f"GPU-0005-{i}" for i in range(8)},
        "/scheduler/node_id": "5",
    }
    size = (tmp_path / MANIFEST_JSON).stat().st_size
    assert size < len(before) / 5  # each node's topology, env, GPUs' fields: once
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
    with pytest.raises(UsageError, match=f"its {NODE_FACTS} are damaged"):
        read_manifest(tmp_path)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "a", "~", "/", "~1"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "x/y", "~0", ""]), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(JSON, min_size=2, max_size=5))
@example([{"a": True}, {"a": 1}, {"a": True}])  # equal in Python, not the same fact
@example([{"b": 0, "a": 0}, {"a": 0, "b": 0}, {"a": 0, "b": 0}])  # key order kept
@example([{"x/y": [1, {"~0": 2}]}, {"x/y": [1, {"~0": 3}]}])  # pointers escape '/' and '~'
@example([[1, 2], [1, 2, 3], [1, 2]])  # a list of another length
def test_any_nodes_facts_read_back_exactly(facts: list[Any]) -> None:
    """Whatever the nodes hold (1 and True, '/' and '~' in keys, lists of other lengths):
    packed, written as JSON and read, each node's facts are exactly its own."""
    manifest = manifest_of({str(k): value for k, value in enumerate(facts)})
    text = json.dumps(pack_nodes(manifest))
    back = unpack_nodes(json.loads(text), Path("m"))
    assert json.dumps(back) == json.dumps(manifest)
