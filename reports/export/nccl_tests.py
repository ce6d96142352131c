"""nccl-tests' JSON (`-J FILE`, JSON_FILE_VERSION 3), written as its writer writes it: NVIDIA/
nccl-tests src/util.cu (jsonOutputInit, writeDeviceReport, writeBenchmarkLinePreamble,
writeBenchmarkLineBody, writeBenchmarkLineTerminator, writeResultFooter, writeErrors,
jsonOutputFinalize), key by key and in its order, so that a script that reads nccl-tests' files
reads distbench's. What distbench has no value for is null, never a made-up number; the top-level
`distbench` object says which statistic fills each number (docs/exports.md).

One document holds every communication row of the run: a result per size and case (out-of-place
and in-place side by side, from the rows' `placement`), its case in `experiment_name` (nccl-tests
writes "" there). nccl-tests writes one document per binary run: one primitive, world size, mode.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from distbench.comm.nccl_table import nccl_count
from distbench.parse import NCCL_DTYPE_NAMES
from distbench.reports.export.rows import ExportRun, case_name, number
from distbench.reports.runs import Row

JSON_FILE_VERSION = 3
"""util.cu's JSON_FILE_VERSION."""
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
"""util.cu's TIME_STRING_FORMAT (nccl-tests: local time; here UTC: the first run's start and
the last run's end, from the manifests)."""
TIME_COLUMN = "time_us_mean"
"""The row's column in `time`: the mean over trials of a trial's mean per op (throughput: `iters`
ops back to back; latency: isolated ops), of the slowest rank. nccl-tests' is the mean per op of
one timed loop, averaged over the ranks: both are means per op, distbench's of the slowest rank."""


def render_nccl_tests(run: ExportRun) -> str:
    """The run as one nccl-tests JSON document (indented; nccl-tests writes it on one line)."""
    return json.dumps(nccl_tests_document(run), indent=1) + "\n"


def nccl_tests_document(run: ExportRun) -> dict[str, Any]:
    manifest = run.manifest
    results = [result(rows) for rows in placements(run.rows).values()]
    bodies = [r[p] for r in results for p in ("out_of_place", "in_place") if r[p] is not None]
    checked = [b["nwrong"] for b in bodies if b["nwrong"] is not None]
    busbw = [b["bus_bw"] for b in bodies if b["bus_bw"] is not None]
    errors = [] if manifest.get("status") in (None, "completed") else [
        f"distbench run status: {manifest.get('status')}"
    ]  # fmt: skip
    return {
        # jsonOutputInit
        "version": JSON_FILE_VERSION,
        "start_time": run.started.strftime(TIME_FORMAT) if run.started else None,
        "args": [str(a) for a in manifest.get("command") or []],
        "env": [f"{k}={v}" for k, v in sorted((manifest.get("worker_env") or {}).items())],
        "nccl_version": nccl_version_code(manifest.get("nccl")),
        # writeDeviceReport
        "config": config(run.rows, manifest),
        # writeResultHeader .. writeResultFooter
        "results": results,
        "out_of_bounds": {
            "count": sum(1 for n in checked if n > 0) if checked else None,
            "okay": ("true" if not any(checked) else "false") if checked else None,
        },
        "average_bus_bandwidth": {
            "bandwidth": sum(busbw) / len(busbw) if busbw else None,
            "okay": "unchecked",
        },
        # writeErrors, jsonOutputFinalize
        "errors": errors,
        "end_time": run.ended.strftime(TIME_FORMAT) if run.ended else None,
        "distbench": metadata(run),
    }


def placements(rows: list[Row]) -> dict[tuple[tuple[str, str], ...], dict[str, Row]]:
    """Rows by case without placement, in the order they first appear: placement -> row."""
    grouped: dict[tuple[tuple[str, str], ...], dict[str, Row]] = {}
    for row in rows:
        key = tuple((c, v) for c, v in row.key if c != "placement")
        grouped.setdefault(key, {})[row.values.get("placement", "out")] = row
    return grouped


def result(by_placement: dict[str, Row]) -> dict[str, Any]:
    """One element of results[]: writeBenchmarkLinePreamble, two writeBenchmarkLineBody (out of
    place first; null where that placement was not measured, as writeBenchMarkLineNullBody
    writes), writeBenchmarkLineTerminator."""
    row = by_placement.get("out") or by_placement["in"]
    values = row.values
    count = int(number(row, "count") or 0)
    count = nccl_count(values.get("primitive", ""), count, int(number(row, "world_size") or 1))
    return {
        "size": int(number(row, "size_bytes") or 0),
        "count": count,
        "type": NCCL_DTYPE_NAMES.get(values.get("dtype", ""), values.get("dtype", "")),
        "redop": values.get("op") or "none",
        "root": root_text(values.get("root", "")),
        "out_of_place": body(by_placement.get("out")),
        "in_place": body(by_placement.get("in")),
        "actual_iterations": int(number(row, "iters") or 0) or None,
        "experiment_name": case_name(row, with_size=False),
    }


def body(row: Row | None) -> dict[str, Any] | None:
    """writeBenchmarkLineBody's object: time (us), alg_bw and bus_bw (GB/s) from that time as
    nccl-tests computes them, nwrong (null where not checked, as nccl-tests without -c)."""
    if row is None:
        return None
    time_us = number(row, TIME_COLUMN)
    size = number(row, "size_bytes")
    moves = number(row, "algbw_GBps") is not None  # empty at world size 1: nothing moves
    alg_bw = size / time_us / 1e3 if moves and size is not None and time_us else None
    factor = number(row, "busbw_factor")
    wrong = number(row, "wrong")
    return {
        "time": time_us,
        "alg_bw": alg_bw,
        "bus_bw": alg_bw * factor if alg_bw is not None and factor is not None else None,
        "nwrong": wrong if wrong is not None and wrong >= 0 else None,  # a double, as jsonDouble
    }


def config(rows: list[Row], manifest: dict[str, Any]) -> dict[str, Any]:
    """writeDeviceReport's `config`, devices[] inside it as nccl-tests nests them."""
    sizes = sorted({int(number(row, "size_bytes") or 0) for row in rows})
    modes = {row.values.get("mode") for row in rows}
    graphs = {row.values.get("graph") for row in rows}
    devices = {row.values.get("device", "") for row in rows}
    return {
        "nthreads": 1,  # one process per rank, one thread each
        "ngpus": 1 if devices and all(d.startswith("cuda") for d in devices) else None,
        "minimum_bytes": sizes[0],
        "maximum_bytes": sizes[-1],
        **step(sizes),
        "warmup_iters": shared_int(rows, "warmup"),
        "iterations": shared_int(rows, "iters"),
        "aggregated_iterations": 1,  # distbench issues each op on its own (no ncclGroup)
        "validation": validation(rows),
        "graph": 0 if graphs == {"false"} else None,  # the replay count is not in the row
        "blocking_collectives": {"throughput": "false", "latency": "true"}.get(
            modes.pop() if len(modes) == 1 else ""
        ),
        "per_iter_timing": "false",
        "per_iter_skip": 0,
        "parallel_init": None,
        "devices": devices_of(manifest, devices),
    }


def validation(rows: list[Row]) -> int | None:
    """nccl-tests' -c: 1 when every row was checked (--check), 0 when none was, null when some."""
    checked = {number(row, "wrong") not in (None, -1) for row in rows}
    return int(checked.pop()) if len(checked) == 1 else None


def step(sizes: list[int]) -> dict[str, int | None]:
    """step_factor when the sizes are a geometric ladder (nccl-tests -f), step_bytes when evenly
    spaced (-i); step_factor null otherwise (a list of sizes nccl-tests cannot express)."""
    if len(sizes) > 1 and sizes[0] > 0:
        ratios = {b / a for a, b in itertools.pairwise(sizes)}
        if len(ratios) == 1 and (r := ratios.pop()) == int(r):
            return {"step_factor": int(r)}
        steps = {b - a for a, b in itertools.pairwise(sizes)}
        if len(steps) == 1:
            return {"step_bytes": steps.pop()}
    return {"step_factor": None}


def devices_of(manifest: dict[str, Any], row_devices: set[str]) -> list[dict[str, Any]]:
    """jsonRankInfo per rank, from the manifest's rank facts (empty when it has none: runs before
    v2, or no manifest). pid and group (nccl-tests' MPI color) are not recorded: null."""
    ranks = manifest.get("ranks") or {}
    nodes = manifest.get("nodes") or {}
    found = []
    for rank in sorted(ranks, key=int):
        facts = ranks[rank] or {}
        gpu = facts.get("gpu") if isinstance(facts.get("gpu"), dict) else None
        node_gpus = (nodes.get(str(facts.get("node"))) or {}).get("gpus")
        found.append(
            {
                "rank": int(rank),
                "group": None,
                "pid": None,
                "hostname": facts.get("host"),
                "device": int(gpu["index"]) if gpu and "index" in gpu else None,
                "device_hex": pci_hex(gpu.get("pci.bus_id")) if gpu else None,
                "device_info": gpu_name(gpu, node_gpus) if gpu else "/".join(sorted(row_devices)),
            }
        )
    return found


def pci_hex(bus_id: object) -> str | None:
    """nvidia-smi's '00000000:07:00.0' as nccl-tests prints it ('%04x:%02x:%02x': 0000:07:00)."""
    try:
        domain, bus, rest = str(bus_id).split(":")
        return f"{int(domain, 16):04x}:{int(bus, 16):02x}:{int(rest.split('.')[0], 16):02x}"
    except ValueError:
        return None


def gpu_name(gpu: dict[str, Any], node_gpus: object) -> str | None:
    """The rank's GPU's name (nvidia-smi's, matched on the UUID), as cudaDeviceProp.name."""
    for entry in node_gpus if isinstance(node_gpus, list) else []:
        if isinstance(entry, dict) and entry.get("uuid") == gpu.get("uuid"):
            return str(entry.get("name"))
    return None


def shared_int(rows: list[Row], column: str) -> int | None:
    """The column's value when every row has the same one; null when they differ."""
    values = {number(row, column) for row in rows}
    value = values.pop() if len(values) == 1 else None
    return int(value) if value is not None else None


def root_text(root: str) -> str:
    """writeBenchmarkLinePreamble's root: '%6i', -1 for a primitive without one."""
    text = root.strip() or "-1"
    try:
        return f"{int(float(text)):6d}"
    except ValueError:
        return f"{text:>6}"


def nccl_version_code(version: object) -> int | None:
    """'2.21.5' -> 22105, NCCL_VERSION_CODE as ncclGetVersion returns it (x.y.z: x*10000 + y*100
    + z since 2.9, x*1000 + y*100 + z before); null without NCCL (gloo)."""
    try:
        major, minor, patch = (int(part) for part in str(version).split(".")[:3])
    except ValueError:
        return None
    return major * (10000 if (major, minor) >= (2, 9) else 1000) + minor * 100 + patch


def metadata(run: ExportRun) -> dict[str, Any]:
    """What no nccl-tests key can say: where the numbers come from (docs/exports.md)."""
    return {
        "source": str(run.path),
        "run_id": run.manifest.get("run_id"),
        "time": f"{TIME_COLUMN}: {TIME_COLUMN_MEANING}",
        "alg_bw": f"size / {TIME_COLUMN}, GB/s (1e9 B/s), as nccl-tests computes it",
        "bus_bw": "alg_bw x the row's busbw_factor (nccl-tests' factors)",
        "null": "distbench has no value for that field (docs/exports.md names each)",
    }


TIME_COLUMN_MEANING = (
    "the mean per op of the slowest rank, over the trials; nccl-tests' time is the mean per op "
    "averaged over the ranks"
)
