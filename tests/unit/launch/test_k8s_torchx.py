"""Kubernetes and torchx (#14 §3): the JobSet in ci/k8s renders to a valid manifest whose
distbench command the real CLI accepts (--dry-run), the torchx component builds an AppDef whose
command the CLI accepts too and runs for real on local_cwd with 2 CPU ranks, and a run under
Kubernetes records it in manifest.json."""

from __future__ import annotations

import importlib.util
import json
import shlex
from string import Template
from typing import Any

import pytest
import yaml

from tests.conftest import usage_error_line
from tests.paths import ROOT

JOBSET = ROOT / "ci" / "k8s" / "jobset.yaml"
VALUES = {
    "NAME": "bench",
    "NNODES": "2",
    "NPROC_PER_NODE": "2",
    "IMAGE": "ghcr.io/me/distbench:0.2.0",
    "BACKEND": "gloo",
    "PRIMITIVES": "allreduce,broadcast",
    "SIZES": "1K,1M",
    "PVC": "results",
    "GPUS": "0",
    "RUN": "nightly-1",
    "QUEUE": "team-a",
}
HAS_TORCHX = importlib.util.find_spec("torchx") is not None


def dry_run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The real CLI on `argv` + --dry-run, in this process: exit 0 and the plan it printed."""
    from distbench.cli.app import run_cli as run_in_process

    code = run_in_process([*argv, "--dry-run"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.err.startswith("distbench: dry run, nothing launched")
    return dict(json.loads(captured.out))  # standard output is the plan alone: JSON


def rendered(text: str) -> dict[str, Any]:
    return dict(yaml.safe_load(Template(text).safe_substitute(VALUES)))


def pod_command(manifest: dict[str, Any]) -> list[str]:
    job = manifest["spec"]["replicatedJobs"][0]["template"]["spec"]
    container = job["template"]["spec"]["containers"][0]
    assert container["command"] == ["bash", "-c"]
    script = container["args"][0].replace("$JOB_COMPLETION_INDEX", "0")  # what the pod's shell does
    argv = shlex.split(script)
    assert argv[:2] == ["exec", "distbench"]
    return argv[2:]


def test_the_jobset_renders_and_its_command_is_one_the_cli_accepts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    manifest = rendered(JOBSET.read_text())
    assert (manifest["apiVersion"], manifest["kind"]) == ("jobset.x-k8s.io/v1alpha2", "JobSet")
    assert manifest["spec"]["network"] == {"enableDNSHostnames": True, "subdomain": "bench"}
    job = manifest["spec"]["replicatedJobs"][0]
    assert job["name"] == "node" and job["replicas"] == 1
    spec = job["template"]["spec"]
    assert (spec["parallelism"], spec["completions"], spec["completionMode"]) == (2, 2, "Indexed")
    pod = spec["template"]["spec"]
    mounts = {m["name"]: m["mountPath"] for m in pod["containers"][0]["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert mounts["results"] == "/results"
    assert volumes["results"]["persistentVolumeClaim"] == {"claimName": "results"}
    env = {e["name"] for e in pod["containers"][0]["env"]}
    assert {"POD_NAMESPACE", "JOBSET_NAME", "NODE_NAME"} <= env  # the scheduler record reads them
    argv = pod_command(manifest)
    # pod 0 of the JobSet's headless service hosts the rendezvous (<name>-<job>-<index>-<pod>)
    assert argv[argv.index("--rdzv-endpoint") + 1] == "bench-node-0-0.bench:29500"
    plan = dry_run(argv, capsys)
    launch = plan["launches"][0]["launch"]
    assert (launch["nnodes"], launch["node_rank"], launch["nproc_per_node"]) == (2, 0, 2)
    assert launch["world_sizes"] == [4] and launch["rdzv_endpoint"] == "bench-node-0-0.bench:29500"
    assert plan["out"] == "/results/nightly-1"


def test_the_kueue_options_are_valid_once_uncommented() -> None:
    text = JOBSET.read_text()
    for line in ("#   kueue.x-k8s.io/queue-name:", "#   kueue.x-k8s.io/podset-required-topology:"):
        assert line in text
    opened = text.replace("  # labels:\n  #   kueue", "  labels:\n    kueue")
    opened = opened.replace(
        "# annotations:\n              #   kueue", "annotations:\n                kueue"
    )
    manifest = rendered(opened)
    assert manifest["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "team-a"}
    pod = manifest["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]
    assert pod["annotations"] == {
        "kueue.x-k8s.io/podset-required-topology": "cloud.google.com/gce-topology-block"
    }


@pytest.mark.skipif(
    not HAS_TORCHX, reason="torchx is not installed (pip install 'distbench[torchx]')"
)
def test_the_torchx_component_builds_a_command_the_cli_accepts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from torchx.specs import macros

    from distbench.torchx import sweep

    app = sweep("--check", nnodes=2, nproc_per_node=2, backend="gloo", world_sizes="2,4")
    role = app.roles[0]
    assert role.num_replicas == 2 and role.entrypoint == "bash"
    values = macros.Values(
        img_root="", app_id="distbench-x1", replica_id="0", rank0_env="TORCHX_RANK0_HOST"
    )
    script = values.apply(role).args[1].replace("${TORCHX_RANK0_HOST:=localhost}", "node0")
    outer, _, command = script.partition(" -m distbench ")
    assert "--nproc_per_node 1" in outer and "--nnodes 2" in outer  # one distbench per node
    argv = shlex.split(command)
    assert argv[0] == "sweep" and "--check" in argv
    plan = dry_run(argv, capsys)
    launch = plan["launches"][0]["launch"]
    assert (launch["nnodes"], launch["nproc_per_node"], launch["world_sizes"]) == (2, 2, [2, 4])
    assert (launch["rdzv_endpoint"], launch["rdzv_id"]) == ("node0:29501", "distbench-x1")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["allreduce", "--resume", "results/x", "--dry-run"], "leave out --resume"),
        (["sweep", "--config", "ci/sweep-example.toml", "--dry-run"], "not --config"),
        (["allreduce", "--dry-run", "--world-sizes", "0"], "world"),
    ],
)
def test_dry_run_bad_input_is_one_line(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert says in usage_error_line(argv, capsys)
