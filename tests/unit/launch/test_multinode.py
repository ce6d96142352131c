"""Two "nodes" on one machine: two distbench invocations rendezvousing on 127.0.0.1 (c10d, and
static with --node-rank); only the node holding global rank 0 writes. Plus the pure parsing of
the multi-node options, Slurm's variables and the torchrun command line."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from distbench.launch.torchrun import build_torchrun_command
from distbench.options.launch import LaunchArgs, Machine, resolve_launch
from distbench.options.multinode import (
    Nodes,
    first_host,
    parse_endpoint,
    resolve_nodes,
    slurm_nodes,
)
from distbench.options.opt import parse_group
from distbench.parse import UsageError
from distbench.spec import LaunchSpec


def test_resolve_nodes_defaults_to_one_node() -> None:
    assert resolve_nodes(None, None, None, None, None, {}) == Nodes()
    assert resolve_nodes(None, None, 4, None, None, {}) == Nodes(nproc_per_node=4)


def test_resolve_nodes_multinode() -> None:
    nodes = resolve_nodes(2, None, 8, "node01:29500", None, {})
    assert nodes == Nodes(2, -1, 8, "node01:29500", "distbench")
    assert resolve_nodes(4, 3, None, "10.0.0.1:1", "job7", {}).node_rank == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"nnodes": "2"}, "needs --rdzv-endpoint"),
        ({"nnodes": "2", "node_rank": "2", "rdzv_endpoint": "h:1"}, "must be below --nnodes"),
        ({"rdzv_endpoint": "h:1"}, "add --nnodes"),
        ({"nnodes": "2", "rdzv_endpoint": "h"}, "not HOST:PORT"),
        ({"nnodes": "2", "rdzv_endpoint": "h:70000"}, "valid port"),
        ({"nnodes": "2", "rdzv_endpoint": "h:1", "rdzv_id": "a b"}, "--rdzv-id"),
        ({"nnodes": "0"}, "--nnodes must be at least 1"),
    ],
)
def test_resolve_nodes_refuses(args: dict[str, str], message: str) -> None:
    """As typed: each option's parser, then the nodes they name."""
    with pytest.raises(UsageError, match=message):
        typed = parse_group(LaunchArgs, args)
        resolve_nodes(
            typed.nnodes,
            typed.node_rank,
            typed.nproc_per_node,
            typed.rdzv_endpoint,
            typed.rdzv_id,
            {},
        )


def test_parse_endpoint() -> None:
    assert parse_endpoint("node01:29500") == "node01:29500"
    assert parse_endpoint("[::1]:29500") == "[::1]:29500"
    assert parse_endpoint(" 10.1.2.3:080 ") == "10.1.2.3:80"


SLURM = {
    "SLURM_NNODES": "4",
    "SLURM_NODEID": "2",
    "SLURM_JOB_ID": "4242",
    "SLURM_STEP_ID": "0",
    "SLURM_NTASKS": "4",
    "SLURM_JOB_NODELIST": "gpu[07-09,12]",
}


def test_slurm_allocation_implies_the_options() -> None:
    assert slurm_nodes(SLURM) == Nodes(4, 2, None, "gpu07:29500", "4242")
    assert resolve_nodes(None, None, 8, None, None, SLURM) == Nodes(4, 2, 8, "gpu07:29500", "4242")
    assert slurm_nodes({**SLURM, "SLURM_NNODES": "1"}) is None
    assert slurm_nodes({k: v for k, v in SLURM.items() if k != "SLURM_STEP_ID"}) is None
    with pytest.raises(UsageError, match="ntasks-per-node=1"):
        slurm_nodes({**SLURM, "SLURM_NTASKS": "32"})


def test_first_host_of_a_slurm_node_list() -> None:
    assert first_host("gpu[07-09,12],cpu1") == "gpu07"
    assert first_host("a1,b2") == "a1"
    assert first_host("node[3]") == "node3"


def launch_spec(**changes: object) -> LaunchSpec:
    base: dict[str, object] = {
        "backend": "gloo",
        "device": "cpu",
        "world_sizes": (2,),
        "run_dir": "/r",
        "run_id": "r",
    }
    return LaunchSpec(**{**base, **changes})  # type: ignore[arg-type]


def test_torchrun_command_single_node_c10d_and_static() -> None:
    spec = Path("/r/spec.json")
    one = build_torchrun_command(launch_spec(), 2, spec)
    assert "--standalone" in one and "--nproc-per-node=2" in one
    multi = dict(nnodes=2, nproc_per_node=4, rdzv_endpoint="h:1", rdzv_id="x", world_sizes=(8,))
    c10d = build_torchrun_command(launch_spec(**multi), 8, spec)
    assert "--standalone" not in c10d
    for flag in ("--nnodes=2", "--nproc-per-node=4", "--rdzv-endpoint=h:1", "--rdzv-id=x"):
        assert flag in c10d
    assert "--rdzv-backend=c10d" in c10d and "--rdzv-conf=join_timeout=300" in c10d
    static = build_torchrun_command(launch_spec(**multi, node_rank=1), 8, spec)
    assert "--rdzv-backend=static" in static and "--node-rank=1" in static
    assert static[-3:] == ["-m", "distbench.worker", str(spec)]  # our flags never reach torchrun


def test_resolve_launch_multinode_sizes() -> None:
    machine = Machine(cuda_gpus=0, nccl=False)
    args = LaunchArgs(backend="gloo", nnodes=2, rdzv_endpoint="h:1", nproc_per_node=2)
    launch = resolve_launch(args, machine, env={})
    assert (launch.world_sizes, launch.nproc_per_node, launch.nnodes) == ([4], 2, 2)
    subgroups = resolve_launch(replace(args, world_sizes=(1, 2)), machine, {})
    assert subgroups.world_sizes == [1, 2]
    with pytest.raises(UsageError, match="exceeds"):
        resolve_launch(replace(args, world_sizes=(8,)), machine, {})
    with pytest.raises(UsageError, match="separate-launches needs one node"):
        resolve_launch(replace(args, separate_launches=True), machine, {})


def test_a_node_that_never_came_is_a_rendezvous_timeout(tmp_path: Path) -> None:
    from distbench.launch.diagnose import describe_failure

    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "ws2-torchrun.log").write_text(
        "    raise RendezvousTimeoutError\n"
        "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n"
    )
    assert describe_failure(tmp_path, 2, 1).startswith(
        "the nodes did not all join the rendezvous within --timeout"
    )


def test_a_taken_rendezvous_port_is_one_line(tmp_path: Path) -> None:
    """torchrun's own traceback (17 lines) was printed when node 0's port was held."""
    from distbench.launch.diagnose import describe_failure

    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "ws2-torchrun.log").write_text(
        "    self._store = TCPStore(  # type: ignore[call-arg]\n"
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any "
        "local network address. port: 29599, useIpv6: false, code: -98, name: EADDRINUSE, "
        "message: address already in use\n"
    )
    text = describe_failure(tmp_path, 2, 1)
    assert text.startswith("port 29599 of --rdzv-endpoint is taken on this host") and (
        "\n" not in text
    )
