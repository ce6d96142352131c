"""Node facts from fixture sysfs trees and canned nvidia-smi output in temporary folders, this
machine's real sources (no GPU, no HCA: "none"), and the merge into `nodes` and `ranks`."""

from __future__ import annotations

import os
from pathlib import Path

from distbench.collectors.nodefacts import collect_node_facts, collect_rank_facts, merge_facts
from distbench.collectors.nodefacts_sys import format_cpus, parse_cpus, sysfs_pci_id


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def fixture_tree(root: Path) -> Path:
    ib = root / "sys/class/infiniband/mlx5_0"
    write(ib / "hca_type", "MT4129")
    write(ib / "fw_ver", "28.39.1002")
    write(ib / "board_id", "MT_0000000838")
    write(ib / "ports/1/state", "4: ACTIVE")
    write(ib / "ports/1/rate", "400 Gb/sec (4X NDR)")
    write(ib / "ports/1/link_layer", "InfiniBand")
    write(root / "sys/class/net/lo/mtu", "65536")
    write(root / "sys/class/net/ens1/speed", "100000")
    write(root / "sys/class/net/ens1/mtu", "9000")
    write(root / "sys/class/net/ens1/operstate", "up")
    pci = root / "sys/bus/pci/devices/0000:18:00.0"
    for name, value in [("current_link_speed", "32.0 GT/s PCIe"), ("current_link_width", "16")]:
        write(pci / name, value)
    write(pci / "max_link_speed", "32.0 GT/s PCIe")
    write(pci / "max_link_width", "16")
    write(pci / "numa_node", "0")
    (root / "sys/module/nvidia_peermem").mkdir(parents=True)
    write(root / "sys/devices/system/node/node0/cpulist", "0-1")
    write(root / "sys/devices/system/node/node1/cpulist", "2-3")
    lib = root / "opt/plugin"
    write(lib / "libnccl-net.so", "")
    return lib


def test_this_machine_real_sources() -> None:
    facts = collect_node_facts(None, os.environ)
    assert facts["gpus"] == "none" and facts["infiniband"] == "none"
    assert facts["nccl"] == "none"
    rank = collect_rank_facts(0, None)
    assert rank["gpu"] == "none"
    assert parse_cpus(rank["cpu_affinity"]) == set(os.sched_getaffinity(0))


def test_cpu_lists_and_pci_ids() -> None:
    assert format_cpus({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11"
    assert parse_cpus("0-3,8,10-11") == {0, 1, 2, 3, 8, 10, 11}
    assert format_cpus(set()) == "unknown"
    assert sysfs_pci_id("00000000:3B:00.0") == "0000:3b:00.0"
    assert sysfs_pci_id("3B:00.0") == "0000:3b:00.0"


def test_rank_numa_from_fixture_and_merge_fills_gpus(tmp_path: Path) -> None:
    root = tmp_path / "root"
    fixture_tree(root)
    rank = collect_rank_facts(1, 1, root=root)
    assert rank["gpu"] == {"index": 1}
    node = {"host": "n0", "gpus": [{"index": "1", "uuid": "GPU-bbbb", "pci.bus_id": "2A"}]}
    merged = merge_facts(
        [(0, {"host": "n0"}, node), (0, rank, None), (1, {"gpu": {"index": 0}}, None)]
    )
    assert list(merged["nodes"]) == ["0"]
    assert merged["ranks"]["1"]["gpu"] == {
        "index": 1, "uuid": "GPU-bbbb", "pci.bus_id": "2A", "smi_index": "1"
    }  # fmt: skip
    assert merged["ranks"]["1"]["node"] == 0
    assert merged["ranks"]["2"]["gpu"]["uuid"] == "unknown"  # node 1 sent no facts


def test_the_rank_gpu_is_matched_on_the_uuid_torch_reports() -> None:
    """CUDA_VISIBLE_DEVICES=3,1: torch's device 0 is nvidia-smi's GPU 3. Matched on the index,
    the manifest named GPU 0 (v3); on the UUID torch reports, GPU 3."""
    smi = [
        {"index": str(i), "uuid": f"GPU-{i}{i}{i}{i}aaaa-0000-0000-0000-00000000000{i}",
         "pci.bus_id": f"0{i}"}
        for i in range(4)
    ]  # fmt: skip
    torch_uuid = "3333aaaa-0000-0000-0000-000000000003"  # str(props.uuid): no GPU- prefix
    rank = collect_rank_facts(0, 0, gpu_uuid=torch_uuid)
    node = {"host": "n0", "gpus": smi}
    gpu = merge_facts([(0, rank, node)])["ranks"]["0"]["gpu"]
    assert (gpu["index"], gpu["smi_index"], gpu["pci.bus_id"]) == (0, "3", "03")
    assert gpu["uuid"] == "GPU-3333aaaa-0000-0000-0000-000000000003"
    unknown = collect_rank_facts(0, 0, gpu_uuid="ffff0000-0000-0000-0000-000000000000")
    lost = merge_facts([(0, unknown, node)])["ranks"]["0"]["gpu"]
    assert (lost["smi_index"], lost["pci.bus_id"]) == ("unknown", "unknown")  # never a guess
