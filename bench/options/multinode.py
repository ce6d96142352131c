"""Multi-node options: their parsers (LaunchArgs in options/launch.py declares them), and the
nodes they name, or a Slurm allocation implies.

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

from distbench.options.hostlist import expand_hostlist
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


def parse_host(text: str) -> str:
    """--master-addr: a host name, IPv4 address or IPv6 address (bracketed or not)."""
    host = text.strip()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address as torchrun's --master-addr takes it
    if not _HOST_RE.match(host):
        raise UsageError(
            f"--master-addr '{text}' is not a host name or address: e.g. --master-addr node01"
        )
    return host


def parse_port(text: str, what: str) -> int:
    """A TCP port, 1-65535."""
    port = parse_int(text, what)
    if port > 65535:
        raise UsageError(f"{what} must be a port from 1 to 65535, got {port}")
    return port


def parse_rdzv_id(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,128}", text):
        raise UsageError(
            f"--rdzv-id '{text}' is not allowed: use up to 128 letters, digits, '.', '_' or '-'"
        )
    return text


def first_host(nodelist: str) -> str:
    """The first host of a Slurm node list: 'gpu[07-09,12],cpu1' -> 'gpu07',
    'node[01-04]-ib' -> 'node01-ib' (scontrol's expansion where Slurm is installed)."""
    return expand_hostlist(nodelist)[0]


def read_int(env: Mapping[str, str], name: str, minimum: int = 1) -> int:
    """A whole-number variable of a launcher's environment, named in the error."""
    return parse_int(env[name], name, minimum)


def slurm_nodes(env: Mapping[str, str]) -> Nodes | None:
    """The multi-node options an srun step implies, or None outside one (or on one node).

    Expects one distbench per node: `srun --ntasks-per-node=1 distbench ...`."""
    needed = ("SLURM_NNODES", "SLURM_NODEID", "SLURM_JOB_ID", "SLURM_STEP_ID")
    if not all(name in env for name in needed):
        return None
    nnodes = read_int(env, "SLURM_NNODES")
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
        node_rank=read_int(env, "SLURM_NODEID", minimum=0),
        rdzv_endpoint=f"{first_host(nodelist)}:{DEFAULT_RDZV_PORT}",
        rdzv_id=parse_rdzv_id(env["SLURM_JOB_ID"]),
    )


def torchrun_env_nodes(env: Mapping[str, str]) -> Nodes | None:
    """The nodes torchrun's environment names (`PET_<OPTION>`, torchrun's fallback for each of
    its options, as Kubeflow Trainer sets them), or None where none is set. What distbench
    cannot honour (an elastic range, etcd, a node list without an address) is refused."""
    pet = {k.removeprefix("PET_"): v.strip() for k, v in env.items() if k.startswith("PET_")}
    if not pet:
        return None
    if pet.get("STANDALONE", "").lower() in ("1", "true"):
        return Nodes(nproc_per_node=pet_nproc(pet))
    low, _, high = pet.get("NNODES", "1").partition(":")
    if high and high != low:
        raise UsageError(
            f"PET_NNODES={pet['NNODES']} is an elastic range: distbench measures a fixed set "
            f"of nodes, set PET_NNODES={high} (or pass --nnodes)"
        )
    nnodes = parse_int(low, "PET_NNODES")
    backend = pet.get("RDZV_BACKEND", "static" if "NODE_RANK" in pet else "c10d").lower()
    if backend not in ("static", "c10d"):
        raise UsageError(
            f"PET_RDZV_BACKEND={pet['RDZV_BACKEND']}: distbench uses torchrun's c10d or static "
            "rendezvous (unset it, or pass --rdzv-endpoint)"
        )
    if nnodes == 1:
        return Nodes(nproc_per_node=pet_nproc(pet))
    endpoint = pet.get("RDZV_ENDPOINT") or (
        f"{pet['MASTER_ADDR']}:{pet.get('MASTER_PORT', DEFAULT_RDZV_PORT)}"
        if "MASTER_ADDR" in pet
        else ""
    )
    if not endpoint:
        raise UsageError(
            f"PET_NNODES={nnodes} (torchrun's environment) names no meeting point: set "
            "PET_MASTER_ADDR and PET_MASTER_PORT (or PET_RDZV_ENDPOINT), or pass --rdzv-endpoint"
        )
    rank = parse_int(pet["NODE_RANK"], "PET_NODE_RANK", 0) if backend == "static" else -1
    if rank >= nnodes:
        raise UsageError(f"PET_NODE_RANK={rank} must be below PET_NNODES={nnodes}")
    return Nodes(
        nnodes=nnodes,
        node_rank=rank,
        nproc_per_node=pet_nproc(pet),
        rdzv_endpoint=parse_endpoint(endpoint),
        rdzv_id=parse_rdzv_id(pet.get("RDZV_ID", "distbench")),
    )


def pet_nproc(pet: Mapping[str, str]) -> int | None:
    """PET_NPROC_PER_NODE: a number, or gpu/auto (distbench's default: one rank per GPU)."""
    value = pet.get("NPROC_PER_NODE", "auto")
    if value.lower() in ("auto", "gpu", "cuda"):
        return None
    return parse_int(value, "PET_NPROC_PER_NODE")


def skypilot_nodes(env: Mapping[str, str]) -> Nodes | None:
    """The nodes of a SkyPilot task (SKYPILOT_NUM_NODES, SKYPILOT_NODE_RANK, the head node as
    the first line of SKYPILOT_NODE_IPS, SKYPILOT_NUM_GPUS_PER_NODE), or None outside one."""
    if "SKYPILOT_NUM_NODES" not in env or "SKYPILOT_NODE_RANK" not in env:
        return None
    nnodes = read_int(env, "SKYPILOT_NUM_NODES")
    if nnodes < 2:
        return None
    ips = env.get("SKYPILOT_NODE_IPS", "").split()
    if len(ips) != nnodes:
        raise UsageError(
            f"SKYPILOT_NODE_IPS lists {len(ips)} addresses for SKYPILOT_NUM_NODES={nnodes}: "
            "pass --rdzv-endpoint HEAD:PORT yourself"
        )
    gpus = parse_int(env.get("SKYPILOT_NUM_GPUS_PER_NODE", "0") or "0", "GPUs per node", 0)
    return Nodes(
        nnodes=nnodes,
        node_rank=read_int(env, "SKYPILOT_NODE_RANK", minimum=0),
        nproc_per_node=gpus or None,
        rdzv_endpoint=parse_endpoint(f"{ips[0]}:{DEFAULT_RDZV_PORT}"),
        rdzv_id="distbench",
    )


def refuse_inside_a_group(env: Mapping[str, str]) -> None:
    """distbench starts its ranks itself: one started as a rank of someone else's group (under
    torchrun, whose agent sets TORCHELASTIC_RUN_ID in every worker, or with a launcher's
    WORLD_SIZE and no PET_* variables to say how the nodes meet) would start a group per rank.
    One process a node (LOCAL_WORLD_SIZE=1: torchx's distbench.sweep runs distbench so, as the
    node's launcher) is the launcher, not a rank."""
    pet = any(name.startswith("PET_") for name in env)
    inside = "TORCHELASTIC_RUN_ID" in env or (
        not pet and env.get("WORLD_SIZE", "1").strip() not in ("", "0", "1")
    )
    if not inside or env.get("LOCAL_WORLD_SIZE", "").strip() == "1":
        return  # one process a node (torchx distbench.sweep, j=Nx1): the node launcher
    names = ("TORCHELASTIC_RUN_ID", "RANK", "LOCAL_RANK", "WORLD_SIZE")
    said = ", ".join(f"{n}={env[n]}" for n in names if n in env)
    raise UsageError(
        f"this process is one rank of a group ({said}): distbench starts its ranks itself, so "
        "run it once per node, not under torchrun, with --nnodes and --rdzv-endpoint (or "
        "torchrun's PET_* variables)"
    )


def environment_nodes(env: Mapping[str, str]) -> Nodes | None:
    """The nodes the environment names: torchrun's PET_* variables, else a Slurm step, else a
    SkyPilot task; None where none does. Two that disagree on the node count are refused."""
    found = {
        name: nodes
        for name, read in (
            ("torchrun's PET_* variables", torchrun_env_nodes),
            ("Slurm", slurm_nodes),
            ("SkyPilot", skypilot_nodes),
        )
        if (nodes := read(env)) is not None
    }
    counts = {nodes.nnodes for nodes in found.values()}
    if len(counts) > 1:
        said = "; ".join(f"{name}: {nodes.nnodes} nodes" for name, nodes in found.items())
        raise UsageError(f"the environment names different node counts ({said}): pass --nnodes")
    return next(iter(found.values()), None)


def master_endpoint(
    rdzv_endpoint: str | None, master_addr: str | None, master_port: int | None
) -> str | None:
    """--rdzv-endpoint, or torchrun's spelling of it: --master-addr and --master-port."""
    if master_addr is None and master_port is None:
        return rdzv_endpoint
    if rdzv_endpoint is not None:
        raise UsageError(
            "--rdzv-endpoint and --master-addr/--master-port name the same thing: give one"
        )
    if master_addr is None:
        return None  # the port alone: resolve_nodes puts it on the environment's head node
    return parse_endpoint(f"{master_addr}:{master_port or DEFAULT_RDZV_PORT}")


def resolve_nodes(
    nnodes: int | None,
    node_rank: int | None,
    nproc_per_node: int | None,
    rdzv_endpoint: str | None,
    rdzv_id: str | None,
    env: Mapping[str, str],
    port: int | None = None,
) -> Nodes:
    """The multi-node options (parsed by their options), else as the environment implies
    (torchrun's PET_*, Slurm, SkyPilot; `port`, a --master-port given alone, replaces the port
    of the endpoint it names), else one node."""
    refuse_inside_a_group(env)
    if nnodes is None and node_rank is None and rdzv_endpoint is None:
        derived = environment_nodes(env)
        if derived is not None:
            nproc_per_node = nproc_per_node or derived.nproc_per_node
            if derived.nnodes == 1:
                return Nodes(nproc_per_node=nproc_per_node)
            endpoint = derived.rdzv_endpoint
            if port is not None:
                endpoint = f"{endpoint.rpartition(':')[0]}:{port}"
            rdzv = rdzv_id or derived.rdzv_id
            return Nodes(derived.nnodes, derived.node_rank, nproc_per_node, endpoint, rdzv)
    if port is not None and rdzv_endpoint is None:
        raise UsageError("--master-port needs --master-addr (or give --rdzv-endpoint HOST:PORT)")
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
