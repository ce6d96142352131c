"""This machine, as the launch options see it (Machine: its CUDA GPUs and whether NCCL is there,
known without importing torch where possible), and the launch options fitted to it: 'auto'
backend, device and world sizes made concrete, and what it cannot run refused with one line
(UsageError -> exit 2). options/launch.py resolves the rest."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from distbench.collectors.machine import cuda_gpus
from distbench.options.multinode import Nodes
from distbench.parse import UsageError


@dataclass(frozen=True)
class Machine:
    """What this host offers, known without importing torch (collectors/machine.py) where the
    installed torch and the driver tell; torch is asked only where they cannot (ROCm, no
    /proc/driver/nvidia outside Linux)."""

    cuda_gpus: int
    nccl: bool

    @staticmethod
    def probe() -> Machine:
        gpus = cuda_gpus(os.environ)
        if gpus is not None:
            return Machine(cuda_gpus=gpus, nccl=gpus > 0 and sys.platform == "linux")
        import torch
        import torch.distributed as dist

        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        return Machine(cuda_gpus=gpus, nccl=gpus > 0 and dist.is_nccl_available())

    @property
    def backends(self) -> list[str]:
        return ["gloo", "nccl"] if self.nccl else ["gloo"]


def resolve_backend(backend: str, machine: Machine) -> str:
    if backend == "auto":
        return "nccl" if machine.nccl else "gloo"
    if backend == "nccl" and not machine.nccl:
        raise UsageError(
            "--backend nccl needs CUDA GPUs and a CUDA build of torch; this machine has none. "
            f"Available here: {', '.join(machine.backends)} (e.g. --backend gloo)"
        )
    return backend


def resolve_device(device: str, backend: str, machine: Machine) -> str:
    if device == "auto":
        return "cuda" if backend == "nccl" else "cpu"
    if device == "cuda" and machine.cuda_gpus == 0:
        raise UsageError("--device cuda needs a CUDA GPU; this machine has none: use --device cpu")
    if backend == "nccl" and device == "cpu":
        raise UsageError(
            "--backend nccl moves GPU memory only: use --device cuda, or --backend gloo"
        )
    return device


def resolve_world_sizes(
    sizes: tuple[int, ...] | None, backend: str, device: str, machine: Machine
) -> list[int]:
    if sizes is None:
        return [machine.cuda_gpus] if backend == "nccl" else [2]
    # gloo's ranks may share GPUs (groups.bind_device: local rank modulo the GPUs); NCCL's not
    if device == "cuda" and backend == "nccl" and max(sizes) > machine.cuda_gpus:
        raise UsageError(
            f"world size {max(sizes)} needs {max(sizes)} GPUs (one per rank) but this machine has "
            f"{machine.cuda_gpus}: use --world-sizes up to {machine.cuda_gpus}"
        )
    return list(sizes)


def resolve_node_sizes(
    sizes: tuple[int, ...] | None, nodes: Nodes, backend: str, device: str, machine: Machine
) -> tuple[list[int], int]:
    """(world sizes, ranks per node; 0 on one node, where the launch size is the world size)."""
    if nodes.nnodes == 1:
        nproc = nodes.nproc_per_node
        default = (nproc,) if nproc else None
        world_sizes = resolve_world_sizes(sizes or default, backend, device, machine)
        if nproc and max(world_sizes) != nproc:
            raise UsageError(
                f"on one node --nproc-per-node is the largest world size: give --world-sizes up to "
                f"{nproc}, or --nproc-per-node {max(world_sizes)}"
            )
        return world_sizes, 0
    nproc = nodes.nproc_per_node or (machine.cuda_gpus if device == "cuda" else 1)
    if device == "cuda" and nproc > machine.cuda_gpus:
        raise UsageError(
            f"--nproc-per-node {nproc} needs {nproc} GPUs on each node but this one has "
            f"{machine.cuda_gpus}: use --nproc-per-node up to {machine.cuda_gpus}"
        )
    total = nodes.nnodes * nproc
    world_sizes = list(sizes) if sizes else [total]
    if max(world_sizes) > total:
        raise UsageError(
            f"world size {max(world_sizes)} exceeds --nnodes {nodes.nnodes} x --nproc-per-node "
            f"{nproc} = {total} ranks: use --world-sizes up to {total}"
        )
    return world_sizes, nproc
