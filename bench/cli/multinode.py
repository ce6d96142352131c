"""Multi-node options: their parsers (LaunchArgs in cli/args.py declares them), and the nodes they
name, or a Slurm allocation implies.

Every node runs the same distbench command; torchrun's rendezvous joins them:

- without --node-rank: c10d rendezvous on --rdzv-endpoint (any node may host it; node ranks are
  assigned by the rendezvous, so global rank 0 and with it results.csv may land on any node);
- with --node-rank (and under Slurm): static rendezvous, the endpoint being node 0's address;
  node 0 holds global rank 0 and writes the results (what --resume of a multi-node run needs).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from distbench.parse import UsageError, parse_int

DEFAULT_RDZV_PORT = 29500
_HOST_RE = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9._-]{0,252}))$")


@dataclass(frozen=True)
class Nodes:
    """How this node joins the run."""

    nnodes: int = 1
    node_rank: int = -1
    """-1: assigned by the c10d rendezvous."""
    nproc_per_node: int | None = None
    """None: the default (GPUs for cuda, 1 for cpu on several nodes; the world size on one)."""
    rdzv_endpoint: str = ""
    rdzv_id: str = ""


def parse_endpoint(text: str) -> str:
    """'node01:29500' -> 'node01:29500'; a host name, IPv4 or [IPv6] address, and a port."""
    hint = "use HOST:PORT, e.g. --rdzv-endpoint node01:29500"
    host, sep, port = text.strip().rpartition(":")
    if not sep or not _HOST_RE.match(host):
        raise UsageError(f"--rdzv-endpoint '{text}' is not HOST:PORT: {hint}")
    if not port.isascii() or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise UsageError(f"--rdzv-endpoint '{text}' has no valid port (1-65535): {hint}")
    return f"{host}:{int(port)}"


def parse_rdzv_id(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,128}", text):
        raise UsageError(
            f"--rdzv-id '{text}' is not allowed: use up to 128 letters, digits, '.', '_' or '-'"
        )
    return text


def first_host(nodelist: str) -> str:
    """The first host of a Slurm node list: 'gpu[07-09,12],cpu1' -> 'gpu07'."""
    text = nodelist.strip()
    match = re.match(r"^([^,\[\]]+)(?:\[([^\]]*)\])?", text)
    if match is None:
        raise UsageError(f"cannot read the Slurm node list '{nodelist}'")
    prefix, ranges = match.group(1), match.group(2)
    if ranges is None:
        return prefix
    first = ranges.split(",", 1)[0].split("-", 1)[0].strip()
    if not first:
        raise UsageError(f"cannot read the Slurm node list '{nodelist}'")
    return prefix + first


def slurm_nodes(env: Mapping[str, str]) -> Nodes | None:
    """The multi-node options an srun step implies, or None outside one (or on one node).

    Expects one distbench per node: `srun --ntasks-per-node=1 distbench ...`."""
    needed = ("SLURM_NNODES", "SLURM_NODEID", "SLURM_JOB_ID", "SLURM_STEP_ID")
    if not all(name in env for name in needed):
        return None
    nnodes = parse_int(env["SLURM_NNODES"], "SLURM_NNODES")
    if nnodes < 2:
        return None
    tasks = env.get("SLURM_NTASKS", str(nnodes)).strip()
    if tasks != str(nnodes):
        raise UsageError(
            f"this Slurm step runs {tasks} tasks on {nnodes} nodes: distbench starts the ranks "
            "itself, so run one per node: srun --ntasks-per-node=1 distbench ..."
        )
    nodelist = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST", "")
    return Nodes(
        nnodes=nnodes,
        node_rank=parse_int(env["SLURM_NODEID"], "SLURM_NODEID", minimum=0),
        rdzv_endpoint=f"{first_host(nodelist)}:{DEFAULT_RDZV_PORT}",
        rdzv_id=parse_rdzv_id(env["SLURM_JOB_ID"]),
    )


def resolve_nodes(
    nnodes: int | None,
    node_rank: int | None,
    nproc_per_node: int | None,
    rdzv_endpoint: str | None,
    rdzv_id: str | None,
    env: Mapping[str, str],
) -> Nodes:
    """The multi-node options (parsed by their options), else as Slurm implies, else one node."""
    if nnodes is None and node_rank is None and rdzv_endpoint is None:
        derived = slurm_nodes(env)
        if derived is not None:
            rdzv = rdzv_id or derived.rdzv_id
            return Nodes(
                derived.nnodes, derived.node_rank, nproc_per_node, derived.rdzv_endpoint, rdzv
            )
    count = nnodes or 1
    rank = node_rank if node_rank is not None else -1
    if count == 1:
        if rdzv_endpoint is not None or rank > 0:
            raise UsageError(
                "--rdzv-endpoint and --node-rank join several nodes: add --nnodes N (N >= 2)"
            )
        return Nodes(nproc_per_node=nproc_per_node)
    if rank >= count:
        raise UsageError(f"--node-rank {rank} must be below --nnodes {count}")
    if rdzv_endpoint is None:
        raise UsageError(
            f"--nnodes {count} needs --rdzv-endpoint HOST:PORT, the same on every node "
            "(e.g. the first node's address and port 29500)"
        )
    return Nodes(
        nnodes=count,
        node_rank=rank,
        nproc_per_node=nproc_per_node,
        rdzv_endpoint=rdzv_endpoint,
        rdzv_id=rdzv_id if rdzv_id is not None else "distbench",
    )
