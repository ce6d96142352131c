"""Two "nodes" on one machine: two distbench invocations rendezvousing on 127.0.0.1 (c10d, and
static with --node-rank); only the node holding global rank 0 writes. Plus the pure parsing of
the multi-node options, Slurm's variables and the torchrun command line."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from distbench.collectors.sink import read_rows
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
from tests.conftest import free_port

TINY = ["--backend", "gloo", "--iters", "3", "--warmup", "1", "--trials", "2", "--timeout", "60"]


def run_nodes(
    tmp_path: Path, command: list[str], per_node: list[list[str]], shared: bool = False
) -> list[subprocess.CompletedProcess[str]]:
    """Start one distbench per node at once (own --out each, or one shared); wait for all."""
    procs = []
    for node, extra in enumerate(per_node):
        out = tmp_path / ("shared" if shared else f"node{node}")
        argv = [sys.executable, "-m", "distbench", *command, "--out", str(out)]
        procs.append(
            subprocess.Popen(
                [*argv, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        )
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done


@pytest.mark.slow
def test_two_nodes_c10d_rendezvous_on_loopback_one_writer(tmp_path: Path) -> None:
    endpoint = f"127.0.0.1:{free_port()}"
    common = ["allreduce", *TINY, "--sizes", "1K,64K", "--nnodes", "2", "--nproc-per-node", "1"]
    common += ["--rdzv-endpoint", endpoint, "--rdzv-id", "loopback-test"]
    results = run_nodes(tmp_path, common, [[], []])
    for result in results:
        assert result.returncode == 0, result.stderr
    writers = [n for n in range(2) if (tmp_path / f"node{n}" / "results.csv").exists()]
    assert len(writers) == 1  # only global rank 0 writes
    rows = read_rows(tmp_path / f"node{writers[0]}" / "results.csv")
    assert [(r["world_size"], r["nnodes"], r["ranks"]) for r in rows] == [("2", "2", "0-1")] * 2
    other = 1 - writers[0]
    assert "did not hold global rank 0" in results[other].stderr
    # every rank knows its node: torchrun's node rank, in its log
    logs = sorted((tmp_path / f"node{other}" / "logs").glob("ws2-rank*.log"))
    assert len(logs) == 1 and "node=1/2" in logs[0].read_text()


@pytest.mark.slow
def test_static_rendezvous_node0_writes_send_recv_pairs_across_nodes(tmp_path: Path) -> None:
    endpoint = f"127.0.0.1:{free_port()}"
    common = ["sendrecv", *TINY, "--sizes", "1K", "--pattern", "pingpong", "--pairs", "all"]
    common += ["--nnodes", "2", "--nproc-per-node", "2", "--rdzv-endpoint", endpoint]
    nodes = [["--node-rank", "0"], ["--node-rank", "1"]]
    results = run_nodes(tmp_path, common, nodes, shared=True)  # one --out, as on a shared fs
    for result in results:
        assert result.returncode == 0, result.stderr
    shared = tmp_path / "shared"
    assert not (shared / "node1" / "results.csv").exists()
    assert sorted(p.name for p in (shared / "node1" / "logs").glob("*rank*")) == [
        "ws4-rank2.log",
        "ws4-rank3.log",
    ]
    rows = read_rows(shared / "results.csv")
    pairs = {(int(r["src"]), int(r["dst"])) for r in rows}
    assert pairs == {(s, d) for s in range(4) for d in range(4) if s != d}
    # ranks 0,1 on node 0 and 2,3 on node 1: both kinds of pairs were measured
    intra = {p for p in pairs if p[0] // 2 == p[1] // 2}
    assert intra == {(0, 1), (1, 0), (2, 3), (3, 2)}
    assert all(r["nnodes"] == "2" and r["world_size"] == "4" for r in rows)


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
