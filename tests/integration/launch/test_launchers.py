"""The launchers users have (#27 §4). The half that launches or runs for seconds; the in-process
half, and the file's whole story: tests/unit/launch/test_launchers.py."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from distbench.collectors.sink import read_rows
from distbench.launch.torchrun import ready_path
from tests.conftest import free_port
from tests.unit.launch.test_launchers import KUBEFLOW, SKYPILOT

TINY = ["allreduce", "--backend", "gloo", "--sizes", "1K", "--iters", "2", "--warmup", "1"]
TINY += ["--trials", "2", "--timeout", "5", "--quiet"]


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without any launcher's variables, plus `extra`."""
    prefixes = ("PET_", "SLURM_", "SKYPILOT_", "TORCHELASTIC_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "GROUP_RANK"):
        env.pop(name, None)
    return {**env, "OMP_NUM_THREADS": "1", **extra}


def distbench(out: Path, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "distbench", *TINY, "--out", str(out), *args]
    return subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


@pytest.mark.slow
def test_torchrun_environment_is_read_or_refused_never_hangs(tmp_path: Path) -> None:
    """Refused: PET_NNODES=2 with no address ends at once, exit 2 (0.2.0: hung). Read: a
    PET_NNODES=1 launch with torchrun's other PET_* options set runs the 1 rank that
    PET_NPROC_PER_NODE names (gloo's default is 2) and exits 0."""
    refused = distbench(tmp_path / "refused", env=clean_env(PET_NNODES="2"))
    _, err = refused.communicate(timeout=60)
    assert refused.returncode == 2, err
    assert "PET_NNODES=2 (torchrun's environment) names no meeting point" in err
    assert "Traceback" not in err
    pet = clean_env(PET_NNODES="1", PET_NPROC_PER_NODE="1", PET_RDZV_CONF="timeout=900")
    read = distbench(tmp_path / "read", env={**pet, "PET_MAX_RESTARTS": "3"})
    _, err = read.communicate(timeout=180)
    assert read.returncode == 0, err
    rows = read_rows(tmp_path / "read" / "results.csv")
    assert [(row["world_size"], row["nnodes"]) for row in rows] == [("1", "1")]


def finish_timed(procs: dict[str, tuple[subprocess.Popen[str], Path]]) -> dict[str, float]:
    """Wait for every process at once; name -> seconds from its torchrun's ready file (which
    the launch removes as it ends) to its exit."""
    seen: dict[str, float] = {}
    took: dict[str, float] = {}
    deadline = time.monotonic() + 180
    while len(took) < len(procs) and time.monotonic() < deadline:
        now = time.monotonic()
        for name, (proc, ready) in procs.items():
            if name not in seen and ready.exists():
                seen[name] = now
            if name not in took and proc.poll() is not None:
                took[name] = now - seen.get(name, float("nan"))
        time.sleep(0.05)
    return took


@pytest.mark.slow
def test_a_rendezvous_with_no_peer_ends_at_the_timeout_naming_the_wait(tmp_path: Path) -> None:
    """Three launches at once, each with no peer and --timeout 5: a c10d --nnodes 2 typed with
    torchrun's spellings, node 1 of a Kubeflow PET_* environment, node 0 of a SkyPilot task.
    Each ends within a few seconds of --timeout after torchrun is ready, with one line naming
    what it waited for, and exit 1."""
    c10d_port, pet_port, sky_port = free_port(), free_port(), free_port()
    spelled = ["--nnodes", "2", "--nproc_per_node", "1", "--master_addr", "127.0.0.1"]
    spelled += ["--master_port", str(c10d_port), "--rdzv_id", "lonely"]
    pet = {**KUBEFLOW, "PET_MASTER_ADDR": "127.0.0.1", "PET_MASTER_PORT": str(pet_port)}
    pet["PET_NPROC_PER_NODE"] = "1"
    sky = {**SKYPILOT, "SKYPILOT_NODE_RANK": "0", "SKYPILOT_NODE_IPS": "127.0.0.1\n127.0.0.2"}
    sky["SKYPILOT_NUM_GPUS_PER_NODE"] = "0"
    launches = {
        "c10d": distbench(tmp_path / "c10d", *spelled, env=clean_env()),
        "pet": distbench(tmp_path / "pet", env=clean_env(**pet)),
        "sky": distbench(tmp_path / "sky", "--master-port", str(sky_port), env=clean_env(**sky)),
    }
    run_dirs = {
        "c10d": tmp_path / "c10d",
        "pet": tmp_path / "pet" / "node1",
        "sky": tmp_path / "sky",
    }
    took = finish_timed({n: (p, ready_path(run_dirs[n], 2)) for n, p in launches.items()})
    expected = {
        "c10d": f"for 2 nodes to join the c10d rendezvous 'lonely' at 127.0.0.1:{c10d_port}",
        "pet": f"as node 1 of 2 for node 0's static rendezvous at 127.0.0.1:{pet_port}",
        "sky": "for the other 1 of 2 nodes to join this node's static rendezvous at "
        f"127.0.0.1:{sky_port}",
    }
    for name, proc in launches.items():
        _, err = proc.communicate(timeout=10)
        assert proc.returncode == 1, err
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, err
        assert errors[0].startswith("error: waited 5 s (--timeout 5) " + expected[name]), err
        assert took[name] < 5 + 8, f"{name}: {took[name]:.1f} s after torchrun was ready"
