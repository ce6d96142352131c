"""The launchers users have (#27 §4): torchrun's environment (PET_*, as Kubeflow Trainer sets it)
and SkyPilot's read or refused, torchrun's own spellings of the options, and --timeout bounding
the rendezvous wait before any worker starts, each on a real distbench process with --timeout 5.
0.2.0 launched --standalone under PET_NNODES=2 and torchrun waited for a second node until it
was killed; a --nnodes 2 launch with no peer took ~20 s past --timeout 5."""

from __future__ import annotations

import os

import pytest

from distbench.collectors.scheduler import scheduler_facts
from distbench.launch.torchrun import worker_env
from distbench.options.launch import LaunchArgs, Machine, resolve_launch
from distbench.options.multinode import (
    Nodes,
    environment_nodes,
    refuse_inside_a_group,
    resolve_nodes,
    skypilot_nodes,
    torchrun_env_nodes,
)
from distbench.options.opt import parse_group
from distbench.parse import UsageError

KUBEFLOW = {
    "PET_NNODES": "2",
    "PET_NPROC_PER_NODE": "auto",
    "PET_NODE_RANK": "1",
    "PET_MASTER_ADDR": "trainjob-node-0-0.trainjob",
    "PET_MASTER_PORT": "29400",
}
SKYPILOT = {
    "SKYPILOT_NUM_NODES": "2",
    "SKYPILOT_NODE_RANK": "1",
    "SKYPILOT_NODE_IPS": "10.0.0.5\n10.0.0.6\n",
    "SKYPILOT_NUM_GPUS_PER_NODE": "8",
}


def test_kubeflow_trainer_variables_are_read() -> None:
    assert torchrun_env_nodes(KUBEFLOW) == Nodes(
        2, 1, None, "trainjob-node-0-0.trainjob:29400", "distbench"
    )
    c10d = {"PET_NNODES": "3:3", "PET_RDZV_ENDPOINT": "h:1", "PET_RDZV_ID": "j9"}
    assert torchrun_env_nodes(c10d) == Nodes(3, -1, None, "h:1", "j9")
    assert torchrun_env_nodes({"PET_NNODES": "1", "PET_NPROC_PER_NODE": "4"}) == Nodes(
        nproc_per_node=4
    )
    assert torchrun_env_nodes({"PET_STANDALONE": "1", "PET_NNODES": "2"}) == Nodes()
    assert torchrun_env_nodes({"OTHER": "1"}) is None
    # the options win over the environment; the environment over nothing
    assert resolve_nodes(None, None, 2, None, None, KUBEFLOW).nproc_per_node == 2
    assert resolve_nodes(None, None, None, None, None, KUBEFLOW).node_rank == 1
    assert resolve_nodes(2, 0, None, "h:5", None, KUBEFLOW) == Nodes(2, 0, None, "h:5", "distbench")
    # torchrun would read them too: its environment has none left
    os.environ["PET_NNODES"] = "2"
    try:
        assert not [name for name in worker_env() if name.startswith("PET_")]
    finally:
        del os.environ["PET_NNODES"]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"PET_NNODES": "1:4"}, "elastic range"),
        ({"PET_NNODES": "2"}, "names no meeting point"),
        ({"PET_NNODES": "2", "PET_RDZV_BACKEND": "etcd", "PET_RDZV_ENDPOINT": "h:1"}, "etcd"),
        ({**KUBEFLOW, "PET_NODE_RANK": "2"}, "PET_NODE_RANK=2 must be below"),
        ({**KUBEFLOW, "PET_NPROC_PER_NODE": "cpu"}, "PET_NPROC_PER_NODE"),
        ({"TORCHELASTIC_RUN_ID": "x", "RANK": "3", "WORLD_SIZE": "8"}, "one rank of a group"),
        ({"WORLD_SIZE": "4", "RANK": "1"}, "one rank of a group"),
        ({"SKYPILOT_NUM_NODES": "2", "SKYPILOT_NODE_RANK": "0"}, "SKYPILOT_NODE_IPS lists 0"),
        ({**KUBEFLOW, **SKYPILOT, "PET_NNODES": "4"}, "different node counts"),
    ],
)
def test_what_cannot_be_honoured_is_refused(env: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        resolve_nodes(None, None, None, None, None, env)


def test_skypilot_variables_are_read() -> None:
    assert skypilot_nodes(SKYPILOT) == Nodes(2, 1, 8, "10.0.0.5:29500", "distbench")
    assert skypilot_nodes({**SKYPILOT, "SKYPILOT_NUM_NODES": "1"}) is None
    # Kubeflow's WORLD_SIZE/RANK beside its PET_* variables are the pods', not a group's
    assert environment_nodes({**KUBEFLOW, "WORLD_SIZE": "2", "RANK": "1"}) is not None
    resolve_nodes(None, None, None, None, None, {**KUBEFLOW, "WORLD_SIZE": "2", "RANK": "1"})


def test_the_manifest_names_the_launcher() -> None:
    pod = scheduler_facts({"KUBERNETES_SERVICE_HOST": "10.0.0.1", **KUBEFLOW})
    assert pod["torchrun_env"]["PET_NODE_RANK"] == "1"
    sky = scheduler_facts({**SKYPILOT, "SKYPILOT_TASK_ID": "sky-1"})
    assert sky == {
        "name": "skypilot",
        "task_id": "sky-1",
        "nnodes": "2",
        "node_rank": "1",
        "head": "10.0.0.5",
        "gpus_per_node": "8",
    }


def test_torchrun_spellings_are_aliases() -> None:
    machine = Machine(cuda_gpus=0, nccl=False)
    typed = {"backend": "gloo", "nnodes": "2", "nproc_per_node": "2"}
    args = parse_group(LaunchArgs, {**typed, "master_addr": "10.1.1.1", "master_port": "1234"})
    launch = resolve_launch(args, machine, env={})
    assert launch.rdzv_endpoint == "10.1.1.1:1234"
    default_port = parse_group(LaunchArgs, {**typed, "master_addr": "h"})
    assert resolve_launch(default_port, machine, env={}).rdzv_endpoint == "h:29500"
    port_only = parse_group(LaunchArgs, {"backend": "gloo", "master_port": "4321"})
    assert resolve_launch(port_only, machine, env=SKYPILOT).rdzv_endpoint == "10.0.0.5:4321"
    with pytest.raises(UsageError, match="--master-port needs --master-addr"):
        resolve_launch(port_only, machine, env={})
    both = parse_group(LaunchArgs, {**typed, "master_addr": "h", "rdzv_endpoint": "h:1"})
    with pytest.raises(UsageError, match="name the same thing"):
        resolve_launch(both, machine, env={})
    with pytest.raises(UsageError, match="port from 1 to 65535"):
        parse_group(LaunchArgs, {"master_port": "70000"})


def test_one_process_a_node_is_the_node_launcher_not_a_rank() -> None:
    """torchx's distbench.sweep runs distbench as torchrun's only worker on each node (j=Nx1):
    TORCHELASTIC_RUN_ID is set, but the process is the node's launcher."""
    env = {"TORCHELASTIC_RUN_ID": "x", "RANK": "0", "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "1"}
    refuse_inside_a_group(env)  # no UsageError
    with pytest.raises(UsageError, match="one rank of a group"):
        refuse_inside_a_group({**env, "LOCAL_WORLD_SIZE": "2"})
