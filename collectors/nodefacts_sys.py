"""A node's facts from the kernel's files (sysfs, procfs) and its environment: NICs, PCIe links,
GPUDirect RDMA, NUMA, container and NCCL net plugin hints. Torch-free; every reader takes the
filesystem root as a parameter so the tests point it at a fixture tree.

Convention (manifest.json `nodes`): "none" when the source is absent (no /sys/class/infiniband:
no HCA), "unknown" when a source exists but cannot be read. Never an error.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

NONE, UNKNOWN = "none", "unknown"


def read_text(path: Path) -> str:
    """A sysfs file's stripped text, or "unknown" (missing, or unreadable: a down link's speed
    raises EINVAL)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return UNKNOWN


def infiniband_facts(root: Path) -> list[dict[str, Any]] | str:
    """Each HCA of /sys/class/infiniband: model, firmware, board, and each port's state, rate
    and link layer (InfiniBand or Ethernet for RoCE)."""
    base = root / "sys/class/infiniband"
    if not base.is_dir():
        return NONE
    hcas = []
    for hca in sorted(base.iterdir()):
        ports = {}
        for port in sorted((hca / "ports").glob("*")):
            ports[port.name] = {
                "state": read_text(port / "state"),
                "rate": read_text(port / "rate"),
                "link_layer": read_text(port / "link_layer"),
            }
        hcas.append(
            {
                "name": hca.name,
                "hca_type": read_text(hca / "hca_type"),
                "fw_ver": read_text(hca / "fw_ver"),
                "board_id": read_text(hca / "board_id"),
                "ports": ports or NONE,
            }
        )
    return hcas or NONE


def net_facts(root: Path) -> list[dict[str, str]] | str:
    """Each network interface of /sys/class/net but loopback: speed (Mb/s), MTU, state."""
    base = root / "sys/class/net"
    if not base.is_dir():
        return NONE
    nics = [
        {
            "name": nic.name,
            "speed_mbps": read_text(nic / "speed"),
            "mtu": read_text(nic / "mtu"),
            "operstate": read_text(nic / "operstate"),
        }
        for nic in sorted(base.iterdir())
        if nic.name != "lo"
    ]
    return nics or NONE


def sysfs_pci_id(bus_id: str) -> str:
    """nvidia-smi's '00000000:3B:00.0' -> sysfs' '0000:3b:00.0'."""
    domain, _, rest = bus_id.strip().rpartition(":")[0].partition(":")
    if not rest:  # already short: '3B:00.0' or '0000:3b:00.0'
        parts = bus_id.strip().lower().split(":")
        return ":".join((["0000"] if len(parts) == 2 else []) + parts)
    return f"{domain[-4:]}:{rest}:{bus_id.rpartition(':')[2]}".lower()


def pcie_link(root: Path, bus_id: str) -> dict[str, str]:
    """A PCI device's link from sysfs: current and maximum speed (GT/s: the generation) and
    width (lanes), and its NUMA node."""
    device = root / "sys/bus/pci/devices" / sysfs_pci_id(bus_id)
    if not device.is_dir():
        return {"link": UNKNOWN}
    return {
        "current_link_speed": read_text(device / "current_link_speed"),
        "current_link_width": read_text(device / "current_link_width"),
        "max_link_speed": read_text(device / "max_link_speed"),
        "max_link_width": read_text(device / "max_link_width"),
        "numa_node": read_text(device / "numa_node"),
    }


def peermem_state(root: Path) -> str:
    """GPUDirect RDMA: whether the nvidia_peermem module (or the older nv_peer_mem) is loaded."""
    modules = root / "sys/module"
    if not modules.is_dir():
        return UNKNOWN
    for name in ("nvidia_peermem", "nv_peer_mem"):
        if (modules / name).is_dir():
            return f"loaded ({name})"
    return "not loaded"


def container_facts(root: Path, env: Mapping[str, str]) -> dict[str, str]:
    """Hints of the container the node's ranks run in: enroot/pyxis, Singularity/Apptainer,
    Docker, Podman, or none."""
    if env.get("APPTAINER_CONTAINER") or env.get("SINGULARITY_CONTAINER"):
        image = env.get("APPTAINER_CONTAINER") or env.get("SINGULARITY_CONTAINER", "")
        return {"kind": "apptainer/singularity", "image": image}
    if (
        env.get("ENROOT_ROOTFS")
        or env.get("PYXIS_RUNTIME_PATH")
        or env.get("container") == "enroot"
    ):
        image = env.get("ENROOT_ROOTFS") or env.get("SLURM_CONTAINER_IMAGE", "")
        return {"kind": "enroot/pyxis", "image": image or UNKNOWN}
    if (root / ".dockerenv").exists():
        return {"kind": "docker", "image": UNKNOWN}
    if (root / "run/.containerenv").exists():
        return {"kind": "podman", "image": UNKNOWN}
    return {"kind": NONE}


def net_plugin(env: Mapping[str, str], root: Path) -> dict[str, Any]:
    """NCCL's network plugin: NCCL_NET_PLUGIN as set, and the libnccl-net*.so libraries on the
    library path (NCCL loads libnccl-net.so, or libnccl-net-<NAME>.so)."""
    folders = [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]
    folders += ["usr/lib/x86_64-linux-gnu", "usr/lib/aarch64-linux-gnu", "usr/local/lib"]
    found: list[str] = []
    for folder in folders:
        path = Path(folder) if folder.startswith("/") else root / folder
        if path.is_dir():
            found += sorted(str(p) for p in path.glob("libnccl-net*.so*"))
    return {"NCCL_NET_PLUGIN": env.get("NCCL_NET_PLUGIN", NONE), "libraries": found or NONE}


def format_cpus(cpus: set[int]) -> str:
    """{0, 1, 2, 3, 8} -> '0-3,8' (the kernel's cpulist format)."""
    ranges: list[str] = []
    ordered = sorted(cpus)
    start = prev = ordered[0] if ordered else 0
    for cpu in [*ordered[1:], None]:
        if cpu is not None and cpu == prev + 1:
            prev = cpu
            continue
        ranges.append(str(start) if start == prev else f"{start}-{prev}")
        if cpu is not None:
            start = prev = cpu
    return ",".join(ranges) if ordered else UNKNOWN


def parse_cpus(text: str) -> set[int]:
    """'0-3,8' -> {0, 1, 2, 3, 8}."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        low, _, high = part.partition("-")
        if low.strip().isdigit():
            cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def numa_nodes(root: Path, cpus: set[int]) -> str:
    """The NUMA nodes whose CPUs the affinity mask touches, e.g. '0' or '0,1'."""
    base = root / "sys/devices/system/node"
    if not base.is_dir():
        return UNKNOWN
    hit = []
    for node in sorted(base.glob("node[0-9]*"), key=lambda p: int(p.name[4:])):
        if parse_cpus(read_text(node / "cpulist")) & cpus:
            hit.append(node.name[4:])
    return ",".join(hit) or UNKNOWN


def cpu_affinity() -> set[int]:
    try:
        return set(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return set(range(os.cpu_count() or 1))
