"""ci/slurm-nightly.sbatch and bare srun on a REAL Slurm (ci/slurm-local.sh: slurmctld and two
slurmd, n1 and n2, on this host). .ci/run brings the cluster up and sets DISTBENCH_SLURM_REQUIRED=1,
so there these tests fail rather than skip; elsewhere they skip when no Slurm answers.

    bash ci/slurm-local.sh up
    SLURM_CONF=/tmp/distbench-slurm/slurm.conf pytest tests/integration/launch/test_slurm.py
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.integration.test_nightly import state
from tests.paths import ROOT as REPO

SBATCH = REPO / "ci" / "slurm-nightly.sbatch"
CPU_CONFIG = REPO / "ci" / "sweep-slurm-cpu.toml"


def slurm_ready() -> str:
    """Why Slurm cannot be used here, or '' when two idle nodes answer."""
    if shutil.which("sinfo") is None:
        return "no Slurm here (sinfo is absent): run ci/slurm-local.sh up"
    listed = subprocess.run(
        ["sinfo", "-h", "-N", "-o", "%N %t"], capture_output=True, text=True, check=False
    )
    if listed.returncode != 0:
        return f"Slurm does not answer: {listed.stderr.strip()[:200]}"
    nodes = [line.split() for line in listed.stdout.splitlines() if line.strip()]
    if len([n for n in nodes if n[1] == "idle"]) < 2:
        return f"Slurm needs two idle nodes, sinfo says {nodes}"
    return ""


@pytest.fixture(scope="module", autouse=True)
def require_slurm() -> None:
    reason = slurm_ready()
    if reason and os.environ.get("DISTBENCH_SLURM_REQUIRED") == "1":
        pytest.fail(f"DISTBENCH_SLURM_REQUIRED=1 but {reason}")
    if reason:
        pytest.skip(reason)


def sbatch_command(tmp_path: Path, nodes: int, name: str, **settings: str) -> list[str]:
    """`sbatch` of the shipped batch script on `nodes` nodes, its output in NAME.out, its run in
    NAME; `settings` are exported to the job over the test's defaults."""
    exports = {
        "CONFIG": str(CPU_CONFIG),
        "DISTBENCH_BASELINES": str(tmp_path / "baselines"),
        "OUT": str(tmp_path / name),
        "OMP_NUM_THREADS": "1",
        **settings,
    }
    export = "ALL," + ",".join(f"{k}={v}" for k, v in exports.items())
    log = tmp_path / f"{name}.out"
    return ["sbatch", f"-N{nodes}", "-o", str(log), f"--export={export}", str(SBATCH)]


def sbatch(tmp_path: Path, nodes: int, name: str, **settings: str) -> tuple[int, str, Path]:
    """Submit the shipped batch script, wait for it; (exit code, its output, run directory)."""
    command = sbatch_command(tmp_path, nodes, name, **settings)
    done = subprocess.run(
        [command[0], "-W", *command[1:]],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    log = tmp_path / f"{name}.out"
    text = log.read_text() if log.exists() else done.stderr
    return done.returncode, text, tmp_path / name


def first_launch(run_dir: Path) -> Path:
    """The first launch's folder of a run of the default LAUNCHES=3 (the run itself for one)."""
    return run_dir / "launch-1" if (run_dir / "launch-1").is_dir() else run_dir


def rows(run_dir: Path) -> list[dict[str, str]]:
    with open(first_launch(run_dir) / "results.csv", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def slurm_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the jobs of the module that share a baseline store (`baselines/`)."""
    return tmp_path_factory.mktemp("slurm")


@pytest.fixture(scope="module")
def one_node_boot(slurm_store: Path) -> tuple[int, str, Path]:
    """A 1-node bootstrap night (BOOTSTRAP=1) in the shared store: its baseline
    'nightly-1n-cpu' sits beside the 2-node test's own, which must never use it."""
    return sbatch(slurm_store, 1, "first", BOOTSTRAP="1")


def test_one_node_bootstraps(one_node_boot: tuple[int, str, Path]) -> None:
    """The 1-node sweep (NODE_ARGS empty) and its bootstrap; the gate of a later night goes
    through the same nightly.sh as the 2-node night below, which asserts it."""
    code, text, run = one_node_boot
    assert code == 0, text
    assert "into baseline 'nightly-1n-cpu'" in text, text  # a window of nights (#25)
    assert (run / "report" / "report.html").exists()
    assert {(r["nnodes"], r["world_size"]) for r in rows(run)} == {("1", "2")}
    assert (run / "launch-3" / "results.csv").exists()  # three sweeps a night, pooled by compare


def test_a_regressed_night_is_swept_again_and_fails_only_when_that_regresses_too(
    slurm_store: Path, one_node_boot: tuple[int, str, Path]
) -> None:
    """CONFIRM (the default): a 1-node night against `one_node_boot`'s baseline, broadcast slowed
    100x in every sweep from the test side (tests/inject/sitecustomize.py on the ranks'
    PYTHONPATH, exported to the job): the night regresses, its re-run at once into OUT-confirm
    (fresh sruns) regresses too, and the job fails naming both."""
    assert one_node_boot[0] == 0, one_node_boot[1]
    inject = REPO / "tests" / "inject"
    code, text, run = sbatch(
        slurm_store, 1, "slowed", LAUNCHES="1", PYTHONPATH=str(inject),
        DISTBENCH_TEST_SLOW="broadcast:100",
    )  # fmt: skip
    assert code == 1, text
    again = Path(f"{run}-confirm")
    assert f"tonight regressed; confirming: the night again at once, into {again}" in text, text
    last = text.strip().splitlines()[-1]
    assert last.startswith("nightly.sh: REGRESSION against 'nightly-1n-cpu', confirmed"), last
    assert state(run)["confirmation"] == f"{again} regressed"  # nightly.sh's record of the night
    assert (run / "compare.md").exists() and (again / "compare.md").exists()
    assert "REGRESSION" in (again / "compare.md").read_text()


def test_the_first_night_without_bootstrap_stops_before_sweeping(tmp_path: Path) -> None:
    code, text, run = sbatch(tmp_path, 1, "nobase")
    assert code == 2, text
    assert "BOOTSTRAP=1" in text
    assert not run.exists()


def test_two_nodes_write_rows_of_both_and_gate_against_their_own_baseline(
    slurm_store: Path, one_node_boot: tuple[int, str, Path]
) -> None:
    """In the store of `one_node_boot` (another allocation's baseline: never used). The boot
    night sweeps once (LAUNCHES=1: the default 3 is the 1-node night's to show); the night sweeps
    twice (LAUNCHES=2, a launch's srun fewer in CI) and its gate passes."""
    assert one_node_boot[0] == 0, one_node_boot[1]
    code, text, run = sbatch(slurm_store, 2, "boot", BOOTSTRAP="1", LAUNCHES="1")
    assert code == 0, text
    assert "into baseline 'nightly-2n-cpu'" in text, text
    code, text, run = sbatch(slurm_store, 2, "night", LAUNCHES="2")
    assert code == 0, text
    # the gate passed (1-node's too); against a window of one night, judging nothing yet
    assert (
        "nothing judged against 'nightly-2n-cpu' yet" in text
        or "no regression against 'nightly-2n-cpu'" in text
    ), text
    found = rows(run)
    assert {(r["nnodes"], r["world_size"], r["ranks"]) for r in found} == {("2", "2", "0-1")}
    assert all(len(r["hosts"].split("+")) == 2 for r in found)
    assert (run / "compare.md").exists()  # the gate ran on node 0's run directory
    assert "current 1 night(s), 2 launch(es)" in (run / "compare.md").read_text()  # pooled
    scheduler = json.loads((first_launch(run) / "manifest.json").read_text())["scheduler"]
    assert scheduler["name"] == "slurm"
    assert (scheduler["nodelist"], scheduler["nnodes"], scheduler["partition"]) == (
        "n[1-2]",
        "2",
        "cpu",
    )


def test_a_bad_confirm_setting_is_refused_before_anything_runs(tmp_path: Path) -> None:
    code, text, run = sbatch(tmp_path, 1, "confirm", CONFIRM="maybe", BOOTSTRAP="1")
    assert code == 2, text
    refused = "slurm-nightly: error: CONFIRM=maybe: give 1 (a regressed night swept again) or 0"
    assert refused in text, text
    assert "Traceback" not in text and not run.exists()


def test_a_gpu_config_on_cpu_nodes_is_refused_before_anything_runs(tmp_path: Path) -> None:
    config = REPO / "ci" / "sweep-nightly-gpu.toml"
    code, text, run = sbatch(tmp_path, 1, "gpu", CONFIG=str(config), BOOTSTRAP="1")
    assert code == 2, text
    assert "has no GPUs" in text
    assert not run.exists()


def test_bare_srun_derives_the_node_options_from_slurm(tmp_path: Path) -> None:
    out = tmp_path / "srun"
    done = subprocess.run(
        ["srun", "-N2", "--ntasks-per-node=1", "distbench", "allreduce", "--backend", "gloo",
         "--sizes", "1K,64K", "--trials", "3", "--check", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    found = rows(out)
    assert {(r["nnodes"], r["world_size"], r["wrong"]) for r in found} == {("2", "2", "0")}


def job_processes(job_id: str, node_id: str) -> list[int]:
    """Pids of the job's processes that Slurm started on one node (SLURM_NODEID in their env)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            env = dict(
                item.split("=", 1)
                for item in (proc / "environ").read_bytes().decode(errors="replace").split("\0")
                if "=" in item
            )
        except OSError:
            continue
        if env.get("SLURM_JOB_ID") == job_id and env.get("SLURM_NODEID") == node_id:
            pids.append(int(proc.name))
    return pids


def rank_logs(run_dir: Path, lines: int = 40) -> str:
    """The tail of every log a launch left (the ranks', torchrun's), for a failing assertion."""
    parts = []
    for path in sorted((run_dir / "logs").glob("*.log")):
        tail = path.read_text(errors="replace").splitlines()[-lines:]
        parts.append(f"--- {path.name} (last {lines} lines):\n" + "\n".join(tail))
    return "\n".join(parts)


def test_a_node_killed_mid_run_is_named_and_finished_rows_are_kept(tmp_path: Path) -> None:
    config = tmp_path / "long.toml"
    config.write_text(
        CPU_CONFIG.read_text()
        .replace('sizes = ["1K", "64K"]', 'sizes = ["1K", "4K", "16K", "64K", "256K", "1M", "4M"]')
        .replace("trials = 12", "trials = 40")
        # Sequential: each row is written as its case ends, so the kill after 2 rows lands with
        # 26 cases to go. Interleaved writes every row in the last round, and a kill that came
        # after rank 0's last collective left node 0 no peer to lose (CI of 9168411: no "peer's
        # connection dropped" line, the step ended after 131 s; reproduced by delaying the kill).
        .replace('order = "interleaved"', 'order = "sequential"')
    )
    assert 'order = "sequential"' in config.read_text()
    out, log = tmp_path / "killed", tmp_path / "killed.out"
    command = sbatch_command(tmp_path, 2, "killed", CONFIG=str(config), BOOTSTRAP="1", LAUNCHES="1")
    submitted = subprocess.run(
        [command[0], "--parsable", *command[1:]],
        cwd=REPO, capture_output=True, text=True, check=True,
    )  # fmt: skip
    job = submitted.stdout.strip().split(";")[0]
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if (out / "results.csv").exists() and len(rows(out)) >= 2:
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"job {job} wrote no rows in 240 s: {log.read_text() if log.exists() else ''}")
    kept_before = len(rows(out))
    victims = job_processes(job, "1")
    assert victims, "found no process of node n2"
    for pid in victims:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    while subprocess.run(["squeue", "-h", "-j", job], capture_output=True, text=True).stdout:
        assert time.monotonic() < deadline + 180, f"job {job} still runs after its node was killed"
        time.sleep(1)
    job_record = subprocess.run(
        ["scontrol", "show", "job", job], capture_output=True, text=True, check=False
    ).stdout
    text = log.read_text()
    seen = f"{job_record}\n--- {log}:\n{text}\n{rank_logs(out)}"  # all of it, should one fail
    assert "ExitCode=3:0" in job_record, seen  # 3: the benchmark failed
    assert "srun: error: n2: task 1: Killed" in text, seen  # Slurm names the node that died
    assert "a peer's connection dropped" in text, seen  # node 0's distbench says why it stopped
    host = socket.gethostname()  # both "nodes" run on this host
    assert f"the group's ranks on other nodes: rank 1 on node 1 (host {host})" in text, seen
    assert f"every finished row is kept in {out}" in text, seen
    assert len(rows(out)) >= kept_before
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] != "completed"
