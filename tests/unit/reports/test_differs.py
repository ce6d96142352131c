""" "What differs" in a two-label report (copies of the frozen v1 fixtures tests/data/cluster-a and
cluster-b, their manifests edited in tmp: never the fixtures), node-level differences within one
run as a warning, and the flattening underneath, with exact values."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from distbench.collectors.nodefacts_diff import flatten, node_warnings, scoped_fields
from distbench.reports.report.build import build_report
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


def test_two_label_report_says_what_differs(tmp_path: Path) -> None:
    a = edited_copy(
        tmp_path,
        "cluster-a",
        {"nccl": "2.21.5", "nodes": {"0": node("a0", "28.39"), "1": node("a1", "28.39")}},
    )
    b_nodes = {
        "0": node("b0", "28.41", NCCL_PROTO="Simple"),
        "1": node("b1", "28.41", driver="535.1"),
    }
    b = edited_copy(tmp_path, "cluster-b", {"nccl": "2.27.3", "nodes": b_nodes})
    files = build_report([str(a), str(b)], str(tmp_path / "report"), by="label")
    text = files.markdown.read_text()
    assert "What differs" in text
    section = text[text.index("What differs") :]
    for expected in ("2.21.5", "2.27.3", "infiniband[mlx5_0].fw_ver", "28.39", "28.41"):
        assert expected in section, expected
    assert "| node 0 | env.NCCL_PROTO |" in section  # set on one cluster only
    assert "| node 1 | host | a1 | b1 |" in section  # the differing nodes named
    assert "cpu_model" not in section  # equal on both: not listed
    assert "gpus[0].uuid" not in section
    # cluster-b's node 1 runs another driver than its node 0: a warning within that run
    assert "the nodes of one run differ in gpus[0].driver_version" in text
    assert "node 1 (b1): 535.1" in text
