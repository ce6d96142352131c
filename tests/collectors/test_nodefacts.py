"""Node facts from fixture sysfs trees and canned nvidia-smi output in temporary folders, this
machine's real sources (no GPU, no HCA: "none"), and the merge into `nodes` and `ranks`."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from distbench.collectors.nodefacts import collect_node_facts, collect_rank_facts, merge_facts
from distbench.collectors.nodefacts_sys import format_cpus, parse_cpus, sysfs_pci_id

SMI_QUERY = (
    "0, NVIDIA H100 80GB HBM3, GPU-aaaa, 00000000:18:00.0, 550.54.15, 96.00.99.00.01, 700.00, "
    "1980, 2619, Enabled, Disabled\n"
    "1, NVIDIA H100 80GB HBM3, GPU-bbbb, 00000000:2A:00.0, 550.54.15, 96.00.99.00.01, 700.00, "
    "1980, 2619, Enabled, Disabled\n"
)
TOPO = "\tGPU0\tGPU1\tNIC0\nGPU0\t X \tNV18\tPIX\nGPU1\tNV18\t X \tSYS\n"


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def fake_smi(tmp_path: Path, query: str = SMI_QUERY, fail: bool = False) -> list[str]:
    """An nvidia-smi stand-in printing canned output for --query-gpu and topo -m."""
    script = tmp_path / "bin" / "nvidia-smi"
    body = (
        "sys.exit(3)"
        if fail
        else (f"print({TOPO!r}, end='') if 'topo' in sys.argv else print({query!r}, end='')")
    )
    write(script, f"#!{sys.executable}\nimport sys\n{body}")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return [str(script)]


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


def test_fixture_node_reads_every_source(tmp_path: Path) -> None:
    root = tmp_path / "root"
    lib = fixture_tree(root)
    env = {"NCCL_PROTO": "Simple", "UCX_TLS": "rc", "LD_LIBRARY_PATH": str(lib), "PATH": ""}
    env |= {"SLURM_JOB_ID": "77", "APPTAINER_CONTAINER": "/img/pt.sif"}
    facts = collect_node_facts("2.21.5", env, root=root, smi=fake_smi(tmp_path))
    gpus = facts["gpus"]
    assert [g["uuid"] for g in gpus] == ["GPU-aaaa", "GPU-bbbb"]
    assert gpus[0]["driver_version"] == "550.54.15"
    assert gpus[0]["ecc.mode.current"] == "Enabled"
    assert gpus[0]["pcie"]["current_link_speed"] == "32.0 GT/s PCIe"
    assert gpus[0]["pcie"]["current_link_width"] == "16"
    assert gpus[1]["pcie"] == {"link": "unknown"}  # no sysfs entry for 2A:00.0
    assert facts["topology"] == TOPO.rstrip()
    hca = facts["infiniband"][0]
    assert (hca["hca_type"], hca["fw_ver"]) == ("MT4129", "28.39.1002")
    assert hca["ports"]["1"] == {
        "state": "4: ACTIVE",
        "rate": "400 Gb/sec (4X NDR)",
        "link_layer": "InfiniBand",
    }
    assert facts["net"] == [
        {"name": "ens1", "speed_mbps": "100000", "mtu": "9000", "operstate": "up"}
    ]
    assert facts["gpudirect_rdma"] == "loaded (nvidia_peermem)"
    assert facts["nccl"] == "2.21.5"
    assert facts["nccl_net_plugin"] == {
        "NCCL_NET_PLUGIN": "none",
        "libraries": [str(lib / "libnccl-net.so")],
    }
    assert facts["env"] == {"NCCL_PROTO": "Simple", "SLURM_JOB_ID": "77", "UCX_TLS": "rc"}
    assert facts["container"] == {"kind": "apptainer/singularity", "image": "/img/pt.sif"}
    assert facts["scheduler"]["job_id"] == "77"


def test_missing_and_failing_sources_say_none_or_unknown(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    facts = collect_node_facts(None, {}, root=empty, smi=[str(tmp_path / "no-such-smi")])
    for key in ("gpus", "topology", "infiniband", "net", "nccl", "env"):
        assert facts[key] == "none", key
    assert facts["gpudirect_rdma"] == "unknown"  # no /sys/module to tell
    assert facts["container"] == {"kind": "none"}
    write(empty / "proc/driver/nvidia/gpus/0000:18:00.0/information", "Model: H100")
    failing = collect_node_facts(None, {}, root=empty, smi=fake_smi(tmp_path, fail=True))
    assert failing["gpus"] == "unknown"  # the driver has GPUs nvidia-smi does not describe
    assert failing["topology"] == "unknown"
    odd = collect_node_facts(None, {}, root=empty, smi=fake_smi(tmp_path, query="a, b\n"))
    assert odd["gpus"] == "unknown"  # a format with other fields: left out, not guessed


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
