"""Node facts from fixture sysfs trees and canned nvidia-smi output in temporary folders, this
machine's real sources (no GPU, no HCA. The half that launches or runs for seconds; the in-process
half, and the file's whole story: tests/unit/collectors/test_nodefacts.py."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

from distbench.collectors.nodefacts import collect_node_facts
from tests.unit.collectors.test_nodefacts import fixture_tree, write

SMI_QUERY = (
    "0, NVIDIA H100 80GB HBM3, GPU-aaaa, 00000000:18:00.0, 550.54.15, 96.00.99.00.01, 700.00, "
    "1980, 2619, Enabled, Disabled\n"
    "1, NVIDIA H100 80GB HBM3, GPU-bbbb, 00000000:2A:00.0, 550.54.15, 96.00.99.00.01, 700.00, "
    "1980, 2619, Enabled, Disabled\n"
)
TOPO = "\tGPU0\tGPU1\tNIC0\nGPU0\t X \tNV18\tPIX\nGPU1\tNV18\t X \tSYS\n"


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
