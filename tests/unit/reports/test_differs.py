""" "What differs" in a two-label report (copies of the frozen v1 fixtures tests/data/cluster-a and
cluster-b, their manifests edited in tmp: never the fixtures), node-level differences within one
run as a warning, and the flattening underneath, with exact values."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from distbench.collectors.nodefacts_diff import flatten, node_warnings, scoped_fields
from tests.paths import DATA


def node(host: str, firmware: str, driver: str = "550.54.15", **env: str) -> dict[str, Any]:
    return {
        "host": host,
        "gpus": [{"index": "0", "uuid": f"GPU-{host}", "driver_version": driver}],
        "infiniband": [{"name": "mlx5_0", "fw_ver": firmware, "ports": {"1": {"rate": "400"}}}],
        "env": env or "none",
    }


def edited_copy(tmp_path: Path, name: str, edit: dict[str, Any]) -> Path:
    copy = tmp_path / name
    shutil.copytree(DATA / name / "allreduce", copy)
    path = copy / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest.update(edit)
    path.write_text(json.dumps(manifest))
    return copy


def test_flatten_names_list_items() -> None:
    assert flatten(node("a", "28.39")) == {
        "host": "a",
        "gpus[0].index": "0",
        "gpus[0].uuid": "GPU-a",
        "gpus[0].driver_version": "550.54.15",
        "infiniband[mlx5_0].name": "mlx5_0",
        "infiniband[mlx5_0].fw_ver": "28.39",
        "infiniband[mlx5_0].ports.1.rate": "400",
        "env": "none",
    }
    fields = scoped_fields({"nccl": "2.21.5", "nodes": {"1": node("b", "28.41")}})
    assert fields[("run", "nccl")] == "2.21.5"
    assert fields[("node 1", "infiniband[mlx5_0].fw_ver")] == "28.41"
    assert ("node 1", "gpus[0].uuid") not in fields  # serials differ by nature


def test_within_run_warning_names_the_nodes() -> None:
    manifest = {"nodes": {"0": node("a", "28.39"), "1": node("b", "28.39", driver="535.1")}}
    assert node_warnings(manifest) == [
        "warning: the nodes of this run differ in gpus[0].driver_version: "
        "node 0 (a) 550.54.15; node 1 (b) 535.1"
    ]
    assert node_warnings({"nodes": {"0": node("a", "28.39")}}) == []
