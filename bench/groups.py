"""Worker-side machinery around a workload: the device binding and the join of torchrun's world
(the worker's and the pytest plugin's), the heartbeat the CLI watches, the resume hand-off, and
world-size sweeps on subgroups of one launch.

Subgroups: for each measured world size k (ascending), every rank calls `new_group(ranks 0..k-1)`
(new_group is collective over the world, so all ranks create every group in the same order).
Members run the workload on that group; the others wait on a gloo barrier with a long timeout
(a subgroup's sweep may take longer than --timeout, and a stopped member is the CLI heartbeat
watchdog's business), so the world stays in step and no collective mixes members and waiters.
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from distbench.collectors.machine import gpu_uuid, torch_facts
from distbench.collectors.manifest import worker_env
from distbench.collectors.nodefacts import (
    collect_node_facts,
    collect_rank_facts,
    merge_facts,
    pack_node_facts,
    pack_rank_facts,
    unpack_node_block,
)
from distbench.collectors.schema import (
    heartbeat_path,
    rank_map_path,
    worker_env_path,
    worker_facts_path,
)
from distbench.collectors.sink import finished_measurements
from distbench.primitives.base import Context
from distbench.spec import RunSpec

HEARTBEAT_S = 1.0
"""Every worker touches its heartbeat file this often (a thread: it beats while a collective
blocks, and stops when the process is stopped or dead); the CLI's watchdog reads the file's age."""

WAIT_TIMEOUT = timedelta(days=7)
"""How long ranks outside a subgroup may wait for its sweep (the heartbeat watchdog, not this,
catches a stopped member)."""


def bind_device(device_type: str, local_rank: int) -> torch.device:
    """cuda: the GPU of this rank's LOCAL_RANK, made current (modulo the GPUs: gloo's ranks may
    share them, NCCL's never do, which the CLI enforces); cpu: the host."""
    if device_type == "cuda":
        device = torch.device("cuda", local_rank % max(1, torch.cuda.device_count()))
        torch.cuda.set_device(device)
        return device
    return torch.device("cpu")


def bound_device(backend: str, device: torch.device) -> torch.device | None:
    """The device_id that init_process_group binds the world to: this rank's GPU for NCCL, so it
    sets up its communicator eagerly on the right device; None for gloo, also on CUDA tensors.
    A bound gloo world makes new_group split it (perform_nocolor_split), which gloo lacks: the
    first GPU smoke's world-size sweep on subgroups died so (torch 2.11, 2026-12-04)."""
    return device if device.type == "cuda" and backend == "nccl" else None


def join_world(backend: str, device: torch.device, timeout_s: float) -> None:
    """Join torchrun's world (its env:// rendezvous), bound to the device of bound_device."""
    dist.init_process_group(
        backend=backend,
        timeout=timedelta(seconds=timeout_s),
        device_id=bound_device(backend, device),
    )


@dataclass(frozen=True)
class Placement:
    """Where a group's ranks ran: the torchrun nodes they span and those nodes' hosts."""

    nnodes: int
    hosts: str
    """One host name per node, in node order, `+`-separated (two loopback "nodes" on one
    machine give `h+h`: the count always matches nnodes)."""


def placement_of(nodes: list[tuple[int, str]]) -> Placement:
    """Each rank's (torchrun node rank, host) -> the group's Placement."""
    by_node = dict(sorted(set(nodes)))
    return Placement(nnodes=len(by_node), hosts="+".join(by_node.values()))


def gather_placement(ctx: Context, run_dir: Path | None = None) -> Placement:
    """Every member's node (torchrun's GROUP_RANK) and host, gathered over the group: a subgroup
    of ranks that all sit on node 0 spans one node, whatever the launch's --nnodes. With
    `run_dir`, rank 0 writes the map (rank -> node, host) for the failure diagnosis."""
    mine = (int(os.environ.get("GROUP_RANK", "0")), socket.gethostname())
    nodes: list[tuple[int, str] | None] = [None] * ctx.world_size
    dist.all_gather_object(nodes, mine, group=ctx.group)
    found = [node for node in nodes if node is not None]
    if run_dir is not None and ctx.rank == 0:
        path = rank_map_path(run_dir, ctx.world_size)
        path.parent.mkdir(parents=True, exist_ok=True)
        ranks = {str(rank): {"node": node, "host": host} for rank, (node, host) in enumerate(found)}
        path.write_text(json.dumps(ranks) + "\n")
    return placement_of(found)


def record_torch_facts(run_dir: Path, world_size: int) -> None:
    """A node's local rank 0 writes what torch reports (GPU names, NCCL version) for the manifest:
    the CLI process never imports torch."""
    path = worker_facts_path(run_dir, world_size)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(torch_facts(), indent=2) + "\n")


@dataclass(frozen=True)
class FactsTraffic:
    """Bytes one rank sent and received point to point sharing the node facts (besides them,
    every rank joins one all_reduce of 4 int64)."""

    sent: int = 0
    received: int = 0


def share_node_facts(
    run_dir: Path, world_size: int, local_rank: int, device: torch.device
) -> FactsTraffic:
    """Each node's local rank 0 collects its node's facts, every rank where it sits. They reach
    global rank 0, the manifest writer, alone (no rank reads them): every rank's to its node's
    local rank 0, then each node's block to rank 0, as uint8 tensors of widths agreed by one
    all_reduce MAX (0.2.0's all_gather_object gave every rank every rank's pickle: W x 4.4 KB at
    W ranks of 8-GPU nodes). Rank 0 adds `nodes` and `ranks` to the torch facts the CLI merges
    into manifest.json. Before any measurement; returns this rank's traffic."""
    rank, world = dist.get_rank(), dist.get_world_size()
    per_node = int(os.environ.get("LOCAL_WORLD_SIZE", str(world)))
    node = int(os.environ.get("GROUP_RANK", "0"))
    gpu = device.index if device.type == "cuda" else None
    uuid = gpu_uuid(gpu) if gpu is not None else None  # the manifest matches the GPU on it
    mine = pack_rank_facts(collect_rank_facts(local_rank, gpu, gpu_uuid=uuid))
    facts = b""
    if local_rank == 0:
        facts = pack_node_facts(node, collect_node_facts(torch_facts()["nccl"], os.environ))
    where = device if dist.get_backend() == "nccl" else torch.device("cpu")  # NCCL: GPU memory
    widths = torch.tensor([len(mine), len(facts), per_node, -per_node], device=where)
    dist.all_reduce(widths, op=dist.ReduceOp.MAX)
    width, facts_width, most, fewest = (int(v) for v in widths.tolist())
    if most != -fewest:
        raise RuntimeError(
            f"nodes run {-fewest} to {most} ranks: give every node one --nproc-per-node"
        )
    first = rank - local_rank  # torchrun numbers a node's ranks contiguously
    if local_rank != 0:
        exchange([(dist.isend, as_bytes(mine, width, where), first)])
        return FactsTraffic(sent=width)
    inbox = [torch.zeros(width, dtype=torch.uint8, device=where) for _ in range(per_node - 1)]
    exchange([(dist.irecv, slot, first + 1 + k) for k, slot in enumerate(inbox)])
    block = torch.cat([as_bytes(mine, width, where), *inbox, as_bytes(facts, facts_width, where)])
    heard = width * (per_node - 1)
    if rank != 0:
        exchange([(dist.isend, block, 0)])
        return FactsTraffic(sent=block.numel(), received=heard)
    others = range(per_node, world, per_node)  # the other nodes' local rank 0
    blocks = [block, *(torch.zeros_like(block) for _ in others)]
    exchange([(dist.irecv, b, src) for b, src in zip(blocks[1:], others, strict=True)])
    write_node_facts(worker_facts_path(run_dir, world_size), blocks, width, per_node)
    return FactsTraffic(received=heard + sum(b.numel() for b in blocks[1:]))


def write_node_facts(path: Path, blocks: list[torch.Tensor], width: int, per_node: int) -> None:
    """Rank 0: every node's block (node order) -> `nodes` and `ranks` beside the torch facts."""
    found = [r for b in blocks for r in unpack_node_block(bytes(b.cpu().numpy()), width, per_node)]
    facts = json.loads(path.read_text()) if path.exists() else torch_facts()
    facts.update(merge_facts(found))
    path.write_text(json.dumps(facts, indent=2) + "\n")


def as_bytes(data: bytes, width: int, device: torch.device) -> torch.Tensor:
    """`data` zero-padded to `width` bytes, as a uint8 tensor on `device`."""
    return torch.frombuffer(bytearray(data.ljust(width, b"\0")), dtype=torch.uint8).to(device)


def exchange(ops: list[tuple[Callable[..., Any], torch.Tensor, int]]) -> None:
    """Post these sends and receives as one batch and wait. A batch, as pairs' exchange: torch's
    NCCL backend runs it on the group's communicator, not a new two-rank one per peer (read in
    ProcessGroupNCCL's source; not yet run on GPUs)."""
    if ops:
        for work in dist.batch_isend_irecv([dist.P2POp(op, t, peer) for op, t, peer in ops]):
            work.wait()


def record_worker_env(run_dir: Path, world_size: int) -> None:
    """Global rank 0 writes the environment it runs with, including what torchrun set
    (OMP_NUM_THREADS, MASTER_ADDR ...), for the manifest."""
    path = worker_env_path(run_dir, world_size)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(worker_env(os.environ), indent=2, sort_keys=True) + "\n")


class Heartbeat:
    """A daemon thread renewing the mtime of the rank's heartbeat file (which holds its pid).
    It runs while the main thread blocks in a collective: c10d releases the GIL."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stop = threading.Event()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{os.getpid()}\n")
        self._thread = threading.Thread(target=self._beat, name="distbench-heartbeat", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            try:
                os.utime(self.path)
            except FileNotFoundError:
                return

    def stop(self) -> None:
        """A finished rank is not a silent one: its file goes."""
        self._stop.set()
        self.path.unlink(missing_ok=True)


def start_heartbeat(run_dir: Path, world_size: int, rank: int) -> Heartbeat:
    return Heartbeat(heartbeat_path(run_dir, world_size, rank))


ROUND_LINE = re.compile(r"round \d+ of \d+ over \d+ measurements$")
"""A round of interleaved or grouped trials starting (comm/interleave.py run_rounds)."""


def announce_measurements(log: Callable[[str], None], path: Path) -> Callable[[str], None]:
    """Global rank 0's log, which also appends each `begin <measurement> <what>` line that a
    runner logs as a measurement starts to `path` (`<unix time> begin ...`): the CLI shows the
    running measurement from it at once, however long it takes (a 1G all_reduce: minutes). And
    each `round k of N over M measurements` line (interleaved and grouped trials, whose rows land
    in their last round): the CLI shows the rounds until then. One short append between
    measurements, outside every timed region."""
    path.parent.mkdir(parents=True, exist_ok=True)

    def log_and_announce(message: str) -> None:
        log(message)
        if message.startswith("begin ") or ROUND_LINE.match(message):
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(f"{time.time():.3f} {message}\n")

    return log_and_announce


def share_done(spec: RunSpec, rank: int) -> tuple[RunSpec, str]:
    """Global rank 0 reads the measurement ids already in its results.csv (a resumed run) and
    tells every rank, with its host: one broadcast. Returns the spec with `done` filled in and
    the writer's host."""
    payload: list[object] = [None]
    if rank == 0:
        payload = [(finished_measurements(Path(spec.launch.run_dir)), socket.gethostname())]
    dist.broadcast_object_list(payload, src=0)
    shared = payload[0]
    assert isinstance(shared, tuple)
    done, host = shared
    return replace(spec, launch=replace(spec.launch, done=tuple(done))), str(host)
