"""What one node offers (manifest.json `nodes`) and where each rank sits on it (`ranks`).

Each node's local rank 0 calls `collect_node_facts`; every rank calls `collect_rank_facts`; they
reach global rank 0 alone, packed as bytes (`pack_rank_facts`, `pack_node_facts`: every rank's to
its node's local rank 0, which sends its node's block to rank 0, groups.share_node_facts) and the
CLI merges them into the manifest after the launch. Torch-free: the NCCL version is handed in by
the rank. The nvidia-smi command and the filesystem root are parameters, so the tests use canned
output and fixture trees. "none": the source is absent; "unknown": present but unreadable
(nodefacts_sys).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from distbench.collectors.manifest import worker_env
from distbench.collectors.nodefacts_sys import (
    NONE,
    UNKNOWN,
    container_facts,
    cpu_affinity,
    format_cpus,
    infiniband_facts,
    net_facts,
    net_plugin,
    numa_nodes,
    pcie_link,
    peermem_state,
)
from distbench.collectors.scheduler import scheduler_facts

GPU_FIELDS = (
    "index",
    "name",
    "uuid",
    "pci.bus_id",
    "driver_version",
    "vbios_version",
    "power.limit",
    "clocks.max.sm",
    "clocks.max.memory",
    "ecc.mode.current",
    "mig.mode.current",
)
"""nvidia-smi --query-gpu fields, recorded per GPU under these names."""

SMI_TIMEOUT_S = 15.0


def run_tool(command: Sequence[str]) -> str | None:
    """stdout of a tool, or None when it is not installed, fails or hangs."""
    if not command or shutil.which(command[0]) is None:
        return None
    try:
        out = subprocess.run(
            list(command), capture_output=True, text=True, timeout=SMI_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout if out.returncode == 0 else None


def gpu_facts(smi: Sequence[str], root: Path) -> list[dict[str, Any]] | str:
    """One entry per GPU from `nvidia-smi --query-gpu`, with its PCIe link from sysfs: "none"
    when there is neither nvidia-smi nor an NVIDIA driver, "unknown" when the driver lists GPUs
    that nvidia-smi does not describe."""
    query = f"--query-gpu={','.join(GPU_FIELDS)}"
    out = run_tool([*smi, query, "--format=csv,noheader,nounits"])
    if out is None:
        driver = root / "proc/driver/nvidia/gpus"
        return UNKNOWN if driver.is_dir() and any(driver.iterdir()) else NONE
    gpus = []
    for line in out.strip().splitlines():
        values = [value.strip() for value in line.split(",")]
        if len(values) != len(GPU_FIELDS):
            continue  # a format this version does not print: left out, not guessed
        gpu: dict[str, Any] = dict(zip(GPU_FIELDS, values, strict=True))
        gpu["pcie"] = pcie_link(root, gpu["pci.bus_id"])
        gpus.append(gpu)
    return gpus or UNKNOWN


def topology_text(smi: Sequence[str]) -> str:
    """`nvidia-smi topo -m` as printed (GPU-GPU and GPU-NIC links: NV#, PIX, PXB, SYS ...)."""
    if not smi or shutil.which(smi[0]) is None:
        return NONE
    out = run_tool([*smi, "topo", "-m"])
    return out.rstrip() if out else UNKNOWN


def collect_node_facts(
    nccl_version: str | None,
    env: Mapping[str, str],
    root: Path = Path("/"),
    smi: Sequence[str] = ("nvidia-smi",),
) -> dict[str, Any]:
    """Everything a node says about itself that can explain a difference in speed."""
    return {
        "host": socket.gethostname(),
        "gpus": gpu_facts(smi, root),
        "topology": topology_text(smi),
        "infiniband": infiniband_facts(root),
        "net": net_facts(root),
        "gpudirect_rdma": peermem_state(root),
        "nccl": nccl_version or NONE,
        "nccl_net_plugin": net_plugin(env, root),
        "env": worker_env(env) or NONE,
        "container": container_facts(root, env),
        "scheduler": scheduler_facts(env),
    }


def collect_rank_facts(
    local_rank: int, gpu_index: int | None, root: Path = Path("/"), gpu_uuid: str | None = None
) -> dict[str, Any]:
    """Where one rank runs: host, local rank, its GPU as torch numbers it and the UUID torch
    reports for it ("none" on CPU; merge_facts adds the PCI bus id and nvidia-smi's index from
    its node's GPUs), the CPUs it may run on and their NUMA nodes."""
    cpus = cpu_affinity()
    gpu: Any = NONE
    if gpu_index is not None:
        gpu = {"index": gpu_index, **({"uuid": gpu_uuid} if gpu_uuid else {})}
    return {
        "host": socket.gethostname(),
        "local_rank": local_rank,
        "gpu": gpu,
        "cpu_affinity": format_cpus(cpus),
        "numa_node": numa_nodes(root, cpus),
    }


def same_uuid(a: object, b: object) -> bool:
    """torch prints a GPU's UUID bare (8-4-4-4-12 hex), nvidia-smi with a `GPU-` prefix."""
    bare = [str(u).strip().lower().removeprefix("gpu-") for u in (a, b)]
    return bool(bare[0]) and bare[0] == bare[1]


def gpu_of(index: int, gpus: Any, uuid: str | None = None) -> dict[str, Any]:
    """A rank's GPU with the UUID, PCI bus id and index its node's nvidia-smi gave (else
    unknown). Matched on the UUID torch reported for the rank's device: under
    CUDA_VISIBLE_DEVICES torch's index 0 can be nvidia-smi's GPU 3. Only without a UUID (a
    torch that reports none) on the index, as nvidia-smi numbers them."""
    listed = gpus if isinstance(gpus, list) else []
    if uuid:
        matched = [g for g in listed if same_uuid(g.get("uuid"), uuid)]
    else:
        matched = [g for g in listed if str(g.get("index")) == str(index)]
    found = matched[0] if matched else {}
    return {
        "index": index,
        "uuid": found.get("uuid", uuid or UNKNOWN),
        "pci.bus_id": found.get("pci.bus_id", UNKNOWN),
        "smi_index": found.get("index", UNKNOWN),
    }


def merge_facts(
    gathered: Sequence[tuple[int, dict[str, Any], dict[str, Any] | None]],
) -> dict[str, Any]:
    """Every rank's (node rank, rank facts, node facts or None) in global rank order -> the
    manifest's {'nodes': {node: facts}, 'ranks': {rank: facts with its node}}."""
    nodes: dict[str, Any] = {}
    ranks: dict[str, Any] = {}
    for node, _, node_facts in gathered:
        if node_facts is not None and str(node) not in nodes:
            nodes[str(node)] = node_facts
    for rank, (node, rank_facts, _) in enumerate(gathered):
        gpu = rank_facts.get("gpu")
        if isinstance(gpu, dict):
            gpus = nodes.get(str(node), {}).get("gpus")
            matched = gpu_of(int(gpu["index"]), gpus, gpu.get("uuid"))
            rank_facts = {**rank_facts, "gpu": matched}
        ranks[str(rank)] = {"node": node, **rank_facts}
    return {"nodes": dict(sorted(nodes.items(), key=lambda kv: int(kv[0]))), "ranks": ranks}


def pack_rank_facts(rank_facts: Mapping[str, Any]) -> bytes:
    """One rank's facts as it sends them to its node's local rank 0: compact JSON (UTF-8, never a
    zero byte, so the zero padding of a fixed-width slot strips off)."""
    return json.dumps(rank_facts, separators=(",", ":")).encode()


def pack_node_facts(node: int, node_facts: Mapping[str, Any]) -> bytes:
    """A node's facts as its local rank 0 sends them to global rank 0: [node, facts] as compact
    JSON, zlib-compressed (an 8-GPU node's ~7.7 KB to ~1.3 KB: nvidia-smi's topology matrix and
    the GPUs' alike fields repeat)."""
    return zlib.compress(json.dumps([node, node_facts], separators=(",", ":")).encode())


def unpack_node_block(
    block: bytes, width: int, per_node: int
) -> list[tuple[int, dict[str, Any], dict[str, Any] | None]]:
    """One node's block as global rank 0 receives it: its `per_node` ranks' packed facts in local
    rank order, each zero-padded to `width` bytes, then its packed node facts (padded) -> each of
    its ranks' (node, rank facts, node facts for local rank 0, else None), as merge_facts takes
    them."""
    slots = [block[k * width : (k + 1) * width].rstrip(b"\0") for k in range(per_node)]
    node, node_facts = json.loads(zlib.decompressobj().decompress(block[per_node * width :]))
    found: list[tuple[int, dict[str, Any], dict[str, Any] | None]] = []
    for local, slot in enumerate(slots):
        rank_facts = json.loads(slot)
        if rank_facts.get("local_rank") != local:  # torchrun numbers a node's ranks contiguously
            held = rank_facts.get("local_rank")
            raise RuntimeError(f"node {node}: slot {local} holds local rank {held}'s facts")
        found.append((int(node), rank_facts, node_facts if local == 0 else None))
    return found
