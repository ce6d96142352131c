"""manifest.json: what a run ran on. Written when the run starts and rewritten (atomically) when it
ends, so even a killed run says what it was and that it did not finish.

`env` is the CLI's environment; `worker_env` is global rank 0's, as torchrun started it (with
OMP_NUM_THREADS and the rendezvous variables torchrun sets), filled in after each launch and
kept per launch in `launches`. `distbench_git_dirty` says whether the checkout had changes.
The torch facts (torch, cuda, nccl, gpu_count, gpus) are known without torch when the run
starts (collectors/machine.py) and completed from the ranks' own report after each launch.

On disk, the facts that every node of a run shares are stored once (`node_facts`, below): at 128
nodes the facts of each node repeat nearly whole, ~1.9 MB of a synthetic manifest.
read_manifest gives `nodes` back whole, so no reader sees the difference, and a manifest written
before (every node whole) reads as it is."""

from __future__ import annotations

import copy
import json
import os
import platform
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from distbench.collectors.machine import installed_torch_facts
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
        "cpu_cores": os.cpu_count(),
        "memory_bytes": memory_bytes(),
        **installed_torch_facts(os.environ),
        "env": worker_env(os.environ),
        "worker_env": None,
        "scheduler": scheduler_facts(os.environ),
        "spec": spec,
        "launches": [],
    }


NODE_FACTS = "node_facts"
"""On disk, in place of `nodes` when a run has several: {"shared": the facts the nodes have alike,
"differ": {node: {JSON pointer (RFC 6901): that node's own value}}}. A node's facts are `shared`
with its pointers' values put in; a fact that only some nodes share is the most common value and
the others' own. Written since schema v4; read_manifest turns it back into `nodes`."""


def shape(value: Any) -> tuple[Any, ...]:
    """A dict's keys in order, a list's length, or a leaf: what must match to compare inside."""
    if isinstance(value, dict):
        return ("dict", *value)
    return ("list", len(value)) if isinstance(value, list) else ("leaf",)


def shared_facts(values: list[Any]) -> Any:
    """What the nodes' facts have alike: among the values of the most common shape, dicts key
    by key and lists item by item, a leaf the most common value (the first of a tie). A value
    of another shape (a node with an extra key, a GPU fewer) then differs whole."""
    common = Counter(shape(v) for v in values).most_common(1)[0][0]
    alike = [v for v in values if shape(v) == common]
    first = alike[0]
    if isinstance(first, dict):
        return {key: shared_facts([v[key] for v in alike]) for key in first}
    if isinstance(first, list):
        return [shared_facts([v[i] for v in alike]) for i in range(len(first))]
    counted = Counter((type(v), v) for v in alike)  # True == 1, but not the same fact
    return counted.most_common(1)[0][0][1]


def fact_differences(shared: Any, value: Any, pointer: str = "") -> dict[str, Any]:
    """{JSON pointer: value} where `value` is not `shared` (the smallest parts that differ)."""
    if shape(shared) != shape(value):
        return {pointer: value}
    if isinstance(shared, dict):
        found: dict[str, Any] = {}
        for key in shared:
            escaped = str(key).replace("~", "~0").replace("/", "~1")
            found |= fact_differences(shared[key], value[key], f"{pointer}/{escaped}")
        return found
    if isinstance(shared, list):
        found = {}
        for index, (a, b) in enumerate(zip(shared, value, strict=True)):
            found |= fact_differences(a, b, f"{pointer}/{index}")
        return found
    same = type(shared) is type(value) and shared == value  # True == 1, but not the same fact
    return {} if same else {pointer: value}


def with_differences(shared: str, differ: Mapping[str, Any]) -> Any:
    """The shared facts (`shared`: as JSON text, parsed afresh for each node: no node shares an
    object with another) with each pointer's value put in: one node's facts whole."""
    facts = json.loads(shared)
    for pointer, value in differ.items():
        if pointer == "":
            facts = copy.deepcopy(value)
            continue
        *parents, last = [
            part.replace("~1", "/").replace("~0", "~") for part in pointer.split("/")[1:]
        ]
        target = facts
        for part in parents:
            target = target[int(part) if isinstance(target, list) else part]
        target[int(last) if isinstance(target, list) else last] = copy.deepcopy(value)
    return facts


def pack_nodes(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest as written: `nodes` of several nodes as NODE_FACTS, in its place."""
    nodes = manifest.get("nodes")
    if not isinstance(nodes, dict) or len(nodes) < 2:
        return manifest
    shared = shared_facts(list(nodes.values()))
    differ = {node: fact_differences(shared, facts) for node, facts in nodes.items()}
    return renamed(manifest, "nodes", NODE_FACTS, {"shared": shared, "differ": differ})


def unpack_nodes(manifest: dict[str, Any], path: Path) -> dict[str, Any]:
    """The manifest as read: NODE_FACTS back into `nodes`, each node whole."""
    packed = manifest.get(NODE_FACTS)
    if packed is None:
        return manifest
    try:
        shared = json.dumps(packed["shared"])
        nodes = {n: with_differences(shared, d) for n, d in packed["differ"].items()}
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as error:
        raise UsageError(f"{path}: its {NODE_FACTS} are damaged ({error!r})") from None
    return renamed(manifest, NODE_FACTS, "nodes", nodes)


def renamed(manifest: dict[str, Any], old: str, new: str, value: Any) -> dict[str, Any]:
    """A copy of `manifest` with key `old` replaced, in its place, by `new`: `value`."""
    return {(new if k == old else k): (value if k == old else v) for k, v in manifest.items()}


def write_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    """Write atomically: a reader sees the old or the new manifest, never half of one. The
    nodes' shared facts are stored once (NODE_FACTS); `manifest` itself is left as it is."""
    path = Path(run_dir) / MANIFEST_JSON
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(pack_nodes(manifest), indent=2, default=str) + "\n")
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
    return unpack_nodes(manifest, path)
