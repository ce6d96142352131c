"""The launch options (LaunchArgs: backend, device, world sizes, run directory, label, timeout,
nodes, resume), each parsed by its option, then resolved against each other and this machine:
'auto' made concrete, every impossible combination refused with one line (UsageError -> exit 2),
and the LaunchSpec built."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from distbench.collectors.rank_samples import RANK_SAMPLE_MODES
from distbench.options.envsweep import parse_env_axis
from distbench.options.machine import Machine, resolve_backend, resolve_device, resolve_node_sizes
from distbench.options.multinode import (
    master_endpoint,
    parse_endpoint,
    parse_host,
    parse_port,
    parse_rdzv_id,
    resolve_nodes,
)
from distbench.options.opt import Opt, choice, flag, integer, text
from distbench.parse import BACKENDS, DEVICES, UsageError, parse_label, parse_world_sizes
from distbench.spec import LaunchSpec

MAX_TIMEOUT_S = 1e7
"""About 116 days: beyond it timedelta overflows and nobody waits anyway."""


def same_named(source: object, *names: str) -> dict[str, Any]:
    """{name: source.name} for each name: the values a spec takes as they are from its options
    (or a resolved launch), under the same names."""
    return {name: getattr(source, name) for name in names}


def parse_timeout(text: str) -> float:
    try:
        timeout_s = float(text)
    except ValueError:
        raise UsageError(f"--timeout '{text}' is not a number of seconds, e.g. 300") from None
    if not 0 < timeout_s <= MAX_TIMEOUT_S:
        raise UsageError(
            f"--timeout must be a positive number of seconds up to {MAX_TIMEOUT_S:.0f}, got {text}"
        )
    return timeout_s


@dataclass(frozen=True)
class LaunchArgs:
    """Options of every command that launches process groups: where and how they run. Each value
    is parsed by its option; resolve_launch checks them against each other and this machine."""

    backend: Annotated[
        str, choice("gloo, nccl, or auto (nccl when GPUs are present).", BACKENDS, "backend")
    ] = "auto"
    device: Annotated[str, choice("cpu, cuda, or auto (cuda for nccl).", DEVICES, "device")] = (
        "auto"
    )
    world_sizes: Annotated[
        tuple[int, ...] | None,
        text(
            "Ranks per launch, e.g. 2,4 [default: local GPUs for nccl, 2 for gloo].",
            lambda value: tuple(parse_world_sizes(value)),
        ),
    ] = None
    out: Annotated[str | None, text("New run directory [default: results/<UTC time>-<name>].")] = (
        None
    )
    label: Annotated[
        str,
        text(
            "Free label stored in every row and the directory name.",
            lambda value: parse_label(value) if value else "",
        ),
    ] = ""
    timeout: Annotated[
        float,
        text(
            "Seconds a rank may stay silent, a collective stuck or the rendezvous wait "
            "before the run fails.",
            parse_timeout,
        ),
    ] = 300.0
    nnodes: Annotated[
        int | None,
        integer("Nodes in the run; run the same command on each [default: 1, or Slurm's]."),
    ] = None
    node_rank: Annotated[
        int | None,
        integer(
            "This node's rank; fixes node 0 as the writer [default: c10d assigns].",
            0,
            decls=("--node-rank", "--node_rank"),
        ),
    ] = None
    nproc_per_node: Annotated[
        int | None,
        integer(
            "Ranks per node [default: local GPUs for cuda, 1 for cpu on several nodes].",
            decls=("--nproc-per-node", "--nproc_per_node"),
        ),
    ] = None
    rdzv_endpoint: Annotated[
        str | None,
        text(
            "HOST:PORT of the rendezvous, the same on every node.",
            parse_endpoint,
            "--rdzv-endpoint",
            "--rdzv_endpoint",
        ),
    ] = None
    rdzv_id: Annotated[
        str | None,
        text("Rendezvous id, the same on every node.", parse_rdzv_id, "--rdzv-id", "--rdzv_id"),
    ] = None
    master_addr: Annotated[
        str | None,
        text(
            "torchrun's spelling of the endpoint's host (with --master-port: --rdzv-endpoint).",
            parse_host,
            "--master-addr",
            "--master_addr",
        ),
    ] = None
    master_port: Annotated[
        int | None,
        integer(
            "The endpoint's port with --master-addr [default: 29500].",
            1,
            65535,
            parse=lambda value: parse_port(value, "--master-port"),
            decls=("--master-port", "--master_port"),
        ),
    ] = None
    rank_samples: Annotated[
        str,
        choice(
            "Every rank's raw samples: off (samples.csv keeps the max over ranks), node (one "
            "Parquet file per node) or all (one per rank).",
            RANK_SAMPLE_MODES,
            "--rank-samples",
        ),
    ] = "off"
    separate_launches: Annotated[
        bool,
        flag(
            "One torchrun launch per world size instead of subgroups of the largest.",
            "--separate-launches",
        ),
    ] = False
    resume: Annotated[
        str | None,
        text("Continue the interrupted run in this directory (its spec, its options)."),
    ] = None
    quiet: Annotated[
        bool,
        flag(
            "No progress (the running measurement, i of N, ETA); the tables still print.", "--quiet"
        ),
    ] = False
    env: Annotated[
        tuple[str, ...],
        Opt(
            "NAME=V1,V2: one launch per value, set for the workers only (rows' env column); "
            "repeatable, every combination.",
            lambda value, _flag: parse_env_axis(value),
            list[str],
            ("--env",),
        ),
    ] = ()
    dry_run: Annotated[
        bool,
        flag("Check the options, print the launch plan and stop: nothing runs.", "--dry-run"),
    ] = False


@dataclass(frozen=True)
class ResolvedLaunch:
    """LaunchArgs checked against each other and this machine, 'auto' resolved."""

    backend: str
    device: str
    world_sizes: list[int]
    label: str
    timeout_s: float
    nnodes: int = 1
    node_rank: int = -1
    nproc_per_node: int = 0
    rdzv_endpoint: str = ""
    rdzv_id: str = ""
    separate_launches: bool = False
    env: tuple[str, ...] = ()
    """The --env axes (`NAME=V1,V2`); cli/run.py makes one launch per combination."""
    rank_samples: str = "off"


def resolve_launch(
    args: LaunchArgs, machine: Machine, env: Mapping[str, str] | None = None
) -> ResolvedLaunch:
    backend = resolve_backend(args.backend, machine)
    device = resolve_device(args.device, backend, machine)
    nodes = resolve_nodes(
        args.nnodes,
        args.node_rank,
        args.nproc_per_node,
        master_endpoint(args.rdzv_endpoint, args.master_addr, args.master_port),
        args.rdzv_id,
        os.environ if env is None else env,
        args.master_port if args.master_addr is None else None,
    )
    if args.separate_launches and nodes.nnodes > 1:
        raise UsageError(
            "--separate-launches needs one node: several nodes join one launch, smaller world "
            "sizes are measured on subgroups"
        )
    world_sizes, nproc = resolve_node_sizes(args.world_sizes, nodes, backend, device, machine)
    return ResolvedLaunch(
        backend=backend,
        device=device,
        world_sizes=world_sizes,
        timeout_s=args.timeout,
        nproc_per_node=nproc,
        **same_named(args, "label", "separate_launches", "env", "rank_samples"),
        **same_named(nodes, "nnodes", "node_rank", "rdzv_endpoint", "rdzv_id"),
    )


def build_launch_spec(launch: ResolvedLaunch, run_dir: Path) -> LaunchSpec:
    return LaunchSpec(
        world_sizes=tuple(launch.world_sizes),
        run_dir=str(run_dir.resolve()),
        run_id=run_dir.name,
        **same_named(launch, "backend", "device", "label", "timeout_s", "separate_launches"),
        rank_samples=launch.rank_samples,
        **same_named(launch, "nnodes", "nproc_per_node", "node_rank", "rdzv_endpoint", "rdzv_id"),
    )
