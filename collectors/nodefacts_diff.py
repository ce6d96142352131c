"""What differs between manifests, and between the nodes of one run: manifest.json flattened to
`field -> text` per scope (`run`, or `node K`), so "NCCL 2.21 vs 2.27, NCCL_PROTO=Simple set, HCA
firmware 28.39 vs 28.41" are rows of one table. Torch-free: the CLI warns at the end of a run
(`node_warnings`), and reports/report/differs.py draws the report's "What differs" section."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RUN_FIELDS: tuple[str, ...] = (
    "host",
    "platform",
    "cpu_model",
    "cpu_cores",
    "cpu_usable",
    "memory_bytes",
    "python",
    "torch",
)
RUN_FIELDS += ("cuda", "nccl", "gpu_count", "gpus", "distbench_version", "env", "worker_env")
"""Top-level manifest fields compared between runs (not ids, times, commands or paths)."""

NATURAL = ("uuid", "pci.bus_id", "NCCL_DEBUG_FILE", "MASTER_PORT", "node_id", "TORCHELASTIC")
"""Fields that differ by nature (serials, addresses, per-run files and ports): not compared."""

ABSENT = "—"
MAX_WARNINGS = 12


def flatten(value: Any, prefix: str = "") -> dict[str, str]:
    """Nested facts -> {'gpus[0].driver_version': '550.54.15', ...}; list items are named by
    their `name` (NICs, HCAs) or `index` (GPUs), else their position."""
    if isinstance(value, Mapping):
        flat: dict[str, str] = {}
        for key, item in value.items():
            flat |= flatten(item, f"{prefix}.{key}" if prefix else str(key))
        return flat
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        flat = {}
        for position, item in enumerate(value):
            name = item.get("name", item.get("index", position))
            flat |= flatten(item, f"{prefix}[{name}]")
        return flat
    if isinstance(value, list):
        return {prefix: ", ".join(str(v) for v in value) or "none"}
    return {prefix: "" if value is None else str(value)}


def natural(field: str) -> bool:
    return any(part in field for part in NATURAL)


def node_label(node: str, facts: Mapping[str, Any]) -> str:
    return f"node {node} ({facts.get('host', '?')})"


def scoped_fields(manifest: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """(scope, field) -> text: scope `run` for the run-wide fields, `node K` per node."""
    fields = {("run", k): v for k, v in flatten({f: manifest.get(f) for f in RUN_FIELDS}).items()}
    for node, facts in (manifest.get("nodes") or {}).items():
        fields |= {(f"node {node}", k): v for k, v in flatten(facts).items()}
    return {key: value for key, value in fields.items() if not natural(key[1])}


def node_differences(manifest: Mapping[str, Any]) -> list[tuple[str, dict[str, str]]]:
    """Node-level fields (host aside) whose values differ between the nodes of one run:
    (field, {node label: value})."""
    nodes = manifest.get("nodes") or {}
    if len(nodes) < 2:
        return []
    flat = {node_label(n, f): flatten(f) for n, f in nodes.items()}
    names = sorted({k for f in flat.values() for k in f if k != "host" and not natural(k)})
    found = []
    for name in names:
        values = {label: f.get(name, ABSENT) for label, f in flat.items()}
        if len(set(values.values())) > 1:
            found.append((name, values))
    return found


def node_warnings(manifest: Mapping[str, Any]) -> list[str]:
    """One line per node-level field that differs within the run (at most MAX_WARNINGS)."""
    found = node_differences(manifest)
    lines = [
        f"warning: the nodes of this run differ in {name}: "
        + "; ".join(f"{label} {value}" for label, value in values.items())
        for name, values in found[:MAX_WARNINGS]
    ]
    if len(found) > MAX_WARNINGS:
        lines.append(f"warning: and {len(found) - MAX_WARNINGS} more node fields differ")
    return lines
