"""The checks of ci/gpu-smoke.sh's steps: each reads a step's run directory (results.csv,
manifest.json, logs/) and returns None when right, else one line saying what is wrong. Torch-free
and pandas-free: they run in the smoke's own process."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

Check = Callable[[Path], str | None]
"""A step's check of its run directory: None when right, else one line saying what is wrong."""


def rows(run_dir: Path) -> list[dict[str, str]]:
    path = run_dir / "results.csv"
    if not path.exists():
        return []
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def check_rows(**want: Callable[[dict[str, str]], bool]) -> Check:
    """Every row passes every named predicate (and there is at least one row)."""

    def check(run_dir: Path) -> str | None:
        found = rows(run_dir)
        if not found:
            return f"no rows in {run_dir}/results.csv"
        for name, test in want.items():
            bad = [r for r in found if not test(r)]
            if bad:
                first = {k: bad[0].get(k) for k in ("measurement", "primitive", "size_bytes")}
                return f"{len(bad)} of {len(found)} rows fail '{name}', first {first}"
        return None

    return check


def filled(column: str) -> Callable[[dict[str, str]], bool]:
    return lambda r: r.get(column, "") not in ("", "nan")


def right(r: dict[str, str]) -> bool:
    return r.get("wrong") in ("0", "-1")


def nccl_timed(r: dict[str, str]) -> bool:
    return r["timer"] in ("cuda_event", "cuda_event+dispatch", "cuda_event+graph")


def manifest_gpu(run_dir: Path) -> str | None:
    """Rank 0's GPU in the manifest is matched to nvidia-smi's by UUID (#30)."""
    ranks = json.loads((run_dir / "manifest.json").read_text()).get("ranks") or {}
    gpu = (ranks.get("0") or {}).get("gpu")
    if not isinstance(gpu, dict) or not str(gpu.get("uuid", "")).startswith("GPU-"):
        return f"manifest ranks[0].gpu has no UUID: {gpu}"
    if gpu.get("smi_index") in (None, "unknown"):
        return f"manifest ranks[0].gpu not matched to nvidia-smi's GPUs: {gpu}"
    return None


def both(*checks: Check) -> Check:
    def check(run_dir: Path) -> str | None:
        return next((err for c in checks if (err := c(run_dir)) is not None), None)

    return check


def trace_check(run_dir: Path) -> str | None:
    manifest = json.loads((run_dir / "manifest.json").read_text())
    if manifest.get("worker_env", {}).get("NCCL_DEBUG") != "INFO":
        return "--nccl-trace did not set NCCL_DEBUG=INFO for the workers"
    if not list((run_dir / "logs").glob("ws*-nccl-rank0.log")):
        return "no NCCL log file under logs/"
    multi = [r for r in rows(run_dir) if r["world_size"] != "1"]
    if multi and not any(r.get("nccl_algo") for r in multi):
        return "no row above world size 1 names NCCL's algorithm: the TUNING lines were not read"
    return None
