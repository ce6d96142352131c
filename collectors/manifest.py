"""manifest.json: what a run ran on. Written when the run starts and rewritten (atomically) when it
ends, so even a killed run says what it was and that it did not finish.

`env` is the CLI's environment; `worker_env` is global rank 0's, as torchrun started it (with
OMP_NUM_THREADS and the rendezvous variables torchrun sets), filled in after each launch and
kept per launch in `launches`. `distbench_git_dirty` says whether the checkout had changes.
The torch facts (torch, cuda, nccl, gpu_count, gpus) are known without torch when the run
starts (collectors/machine.py) and completed from the ranks' own report after each launch.

On disk, what the nodes and the ranks of a run have alike is stored once (manifest_pack.py): at
128 nodes each node's facts repeat nearly whole, ~1.8 MB of a synthetic manifest. read_manifest
gives `nodes` and `ranks` back whole, so no reader sees the difference, and a manifest written
before (every entry whole) reads as it is."""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from distbench.collectors.machine import installed_torch_facts
from distbench.collectors.manifest_pack import pack_manifest, unpack_manifest
from distbench.collectors.scheduler import scheduler_facts
from distbench.collectors.schema import MANIFEST_JSON, SCHEMA_VERSION
from distbench.parse import UsageError

ENV_PREFIXES: tuple[str, ...] = ("NCCL_", "GLOO_", "TORCH_", "CUDA_", "OMP_", "MASTER_")
ENV_PREFIXES += ("SLURM_JOB", "DISTBENCH_", "UCX_", "FI_", "MLX5_")  # UCX_ ...: #12 §2
"""Environment variables that change how a run behaves: the manifest records those set."""

WORKER_ENV_EXTRA = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONHASHSEED")
"""Recorded from the workers too (torchrun sets OMP_NUM_THREADS=1 when it is unset)."""


def worker_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The ENV_PREFIXES variables (plus WORKER_ENV_EXTRA) of a worker's environment, sorted.
    Per-rank variables (RANK, LOCAL_RANK, GROUP_RANK ...) are left out: they differ by rank."""
    return {
        k: v
        for k, v in sorted(environ.items())
        if k.startswith(ENV_PREFIXES) or k in WORKER_ENV_EXTRA
    }


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def usable_cpus() -> int | None:
    """The logical CPUs this process may run on (its affinity: taskset, a cgroup's cpuset, a
    Slurm allocation), which cpu_cores does not see; None where the platform cannot say."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _git(path: Path, *args: str) -> str | None:
    """stdout of a git command in `path`, or None when git or the checkout is not there."""
    try:
        out = subprocess.run(
            ["git", "-C", str(path), *args],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout if out.returncode == 0 else None


def git_sha(path: Path) -> str | None:
    """The commit of the distbench checkout, when installed from one."""
    out = _git(path, "rev-parse", "HEAD")
    return (out or "").strip() or None


def git_dirty(path: Path) -> bool | None:
    """Whether the checkout's tracked files differ from its commit (the sha alone would then
    name code that did not run); None outside a checkout."""
    if git_sha(path) is None:
        return None
    out = _git(path, "status", "--porcelain", "--untracked-files=no")
    return None if out is None else bool(out.strip())


def load_average() -> list[float] | None:
    """The machine's 1-, 5- and 15-minute load averages (os.getloadavg), or None where the
    platform has none. The gate's verdicts move with the box's load (docs/gate.md: a baseline
    recorded under load 6-13 failed 85 % of unchanged nights of a quiet box), so a run says what
    load it ran under: at its start and at its end."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (AttributeError, OSError):
        return None


CPU_TIMES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
"""The first counters of /proc/stat's `cpu` line, in USER_HZ ticks summed over the CPUs."""


def cpu_times() -> list[int] | None:
    """The machine's CPU time counters (CPU_TIMES, from /proc/stat), or None where there is no
    /proc/stat or it lacks the steal counter (Linux before 2.6.11)."""
    try:
        first = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    if not first or first[0] != "cpu" or len(first) < 1 + len(CPU_TIMES):
        return None
    return [int(value) for value in first[1 : 1 + len(CPU_TIMES)]]


def steal_share(start: object, end: list[int] | None) -> float | None:
    """The share of the machine's CPU time that the hypervisor gave to other guests between two
    cpu_times() (steal over every counter's growth), or None where either is missing or the
    counters went back (a reboot between a run and its resume). On a VM whose host is busy the
    guest's own load average stays put while every launch runs slower: 12 of 96 launches of the
    nightly matrix took 1.5-2x as long at the same load (docs/gate.md, g5)."""
    if not isinstance(start, list) or end is None or len(start) != len(end):
        return None
    grown = [b - a for a, b in zip(start, end, strict=True)]
    total = sum(grown)
    if total <= 0 or min(grown) < 0:
        return None
    return round(grown[CPU_TIMES.index("steal")] / total, 4)


def build_manifest(run_id: str, command: list[str], spec: dict[str, Any]) -> dict[str, Any]:
    import distbench

    package_dir = Path(distbench.__file__).resolve().parent
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "status": "running",
        "started_utc": utc_now(),
        "ended_utc": None,
        "command": command,
        "distbench_version": distbench.__version__,
        "distbench_git_sha": git_sha(package_dir),
        "distbench_git_dirty": git_dirty(package_dir),
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_cores": os.cpu_count(),  # logical CPUs (hardware threads), as the OS counts them
        "cpu_usable": usable_cpus(),
        "memory_bytes": memory_bytes(),
        "load_avg_start": load_average(),
        "load_avg_end": None,
        "cpu_times_start": cpu_times(),
        "cpu_steal_share": None,
        **installed_torch_facts(os.environ),
        "env": worker_env(os.environ),
        "worker_env": None,
        "scheduler": scheduler_facts(os.environ),
        "spec": spec,
        "launches": [],
    }


def write_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    """Write atomically: a reader sees the old or the new manifest, never half of one. What the
    nodes and ranks share is stored once (manifest_pack.py); `manifest` itself is left as it is."""
    path = Path(run_dir) / MANIFEST_JSON
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(pack_manifest(manifest), indent=2, default=str) + "\n")
    os.replace(tmp, path)


def read_manifest(run_dir: Path) -> dict[str, Any] | None:
    """manifest.json, or None when missing; a run of a newer schema version is refused."""
    path = run_dir / MANIFEST_JSON
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(f"{path} is not readable JSON: {error}") from None
    if not isinstance(manifest, dict):
        raise UsageError(f"{path} is not a distbench manifest: expected a JSON object")
    version = manifest.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise UsageError(
            f"{path} has schema version {version!r}, not a distbench schema version (1.."
            f"{SCHEMA_VERSION}): it is not a distbench manifest"
        )
    if version > SCHEMA_VERSION:
        raise UsageError(
            f"{path} was written by a newer distbench (schema v{version}); this one reads up to "
            f"v{SCHEMA_VERSION}: upgrade distbench (in its checkout: git pull && pip install -e .) "
            "to read it"
        )
    try:
        return unpack_manifest(manifest)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as error:
        raise UsageError(f"{path}: its packed node or rank facts are damaged ({error!r})") from None
