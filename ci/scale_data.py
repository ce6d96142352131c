"""Run directories as distbench writes them at 1,024 ranks, for ci/bench_scale.py (#27 §3).

Everything goes through distbench's own writers (CsvSink, RunSpec.save, write_manifest, the
Parquet writer of --rank-samples), so the files are byte for byte what a real launch of that
shape leaves; only the times are drawn (lognormal around a size-dependent latency). The
manifest carries 128 nodes x 8 GPUs of node facts and a 1,024-rank `ranks` map, as
collectors/nodefacts.py collects them on an H100 cluster under Slurm and enroot.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np

NODES, GPUS = 128, 8
RANKS = NODES * GPUS
PRIMITIVES = ("all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "all_to_all")
FACTORS = {"all_reduce": 2 * (RANKS - 1) / RANKS, "broadcast": 1.0, "reduce": 1.0}
BUS_IDS = [f"00000000:{b}:00.0" for b in ("18", "2A", "3A", "5D", "9A", "AB", "BA", "DB")]


def node_facts(k: int) -> dict[str, Any]:
    """Node k's facts: its host, GPUs' UUIDs and Slurm node id its own, the rest alike."""
    cells = [f"GPU{i}" for i in range(GPUS)] + [f"NIC{i}" for i in range(GPUS)]
    topo = ["\t" + "\t".join(cells) + "\tCPU Affinity\tNUMA Affinity"]
    for a in cells:
        links = ["X" if a == b else "NV18" if a[0] == b[0] == "G" else "PXB" for b in cells]
        topo.append(f"{a}\t" + "\t".join(links) + ("\t0-55,112-167\t0" if a[0] == "G" else ""))
    topo += ["", "Legend:", "  X    = Self", "  PXB  = multiple PCIe bridges", "  NV#  = NVLinks"]
    hcas = ",".join(f"mlx5_{i}" for i in range(GPUS))
    env = {"NCCL_IB_HCA": hcas, "NCCL_SOCKET_IFNAME": "bond0", "NCCL_IB_GID_INDEX": "3"}
    env |= {"NCCL_NVLS_ENABLE": "1", "NCCL_NET_GDR_LEVEL": "PHB", "NCCL_IB_QPS_PER_CONNECTION": "4"}
    env |= {"CUDA_DEVICE_MAX_CONNECTIONS": "1", "OMP_NUM_THREADS": "1", "MASTER_PORT": "29500"}
    env |= {"TORCH_NCCL_ASYNC_ERROR_HANDLING": "1", "SLURM_JOB_ID": "912345", "UCX_TLS": "rc,sm"}
    gpu = {"name": "NVIDIA H100 80GB HBM3", "driver_version": "550.54.15"}
    gpu |= {"vbios_version": "96.00.99.00.01", "power.limit": "700.00", "clocks.max.sm": "1980"}
    gpu |= {"clocks.max.memory": "2619", "ecc.mode.current": "Enabled"}
    gpu |= {"mig.mode.current": "Disabled"}
    link = {"current_link_speed": "32.0 GT/s PCIe", "current_link_width": "16"}
    link |= {"max_link_speed": "32.0 GT/s PCIe", "max_link_width": "16"}
    port = {"1": {"state": "4: ACTIVE", "rate": "400 Gb/sec (4X NDR)", "link_layer": "InfiniBand"}}
    slurm = {"name": "slurm", "job_id": "912345", "job_name": "nightly", "nnodes": str(NODES)}
    slurm |= {"nodelist": "gpu-node[000-127]", "partition": "h100", "ntasks": str(RANKS)}
    slurm |= {"tasks_per_node": f"8(x{NODES})", "gpus_on_node": "8", "node_id": str(k)}
    return {
        "host": f"gpu-node{k:03d}",
        "gpus": [
            {"index": str(i), **gpu, "uuid": f"GPU-{k:04x}{i:04x}-7c2e-41f5-9d3a-0b1c2d3e4f5a"}
            | {"pci.bus_id": BUS_IDS[i], "pcie": {**link, "numa_node": str(i // 4)}}
            for i in range(GPUS)
        ],
        "topology": "\n".join(topo),
        "infiniband": [
            {"name": f"mlx5_{i}", "hca_type": "MT4129", "fw_ver": "28.39.1002", "ports": port}
            for i in range(GPUS)
        ],
        "net": [
            {"name": name, "speed_mbps": speed, "mtu": mtu, "operstate": "up"}
            for name, speed, mtu in [("bond0", "200000", "9000"), ("eno1", "25000", "1500")]
        ],
        "gpudirect_rdma": "loaded (nvidia_peermem)",
        "nccl": "2.21.5",
        "nccl_net_plugin": {"NCCL_NET_PLUGIN": "none", "libraries": "none"},
        "env": env,
        "container": {"kind": "enroot/pyxis", "image": "nvcr.io#nvidia/pytorch:24.05-py3"},
        "scheduler": slurm,
    }


def cluster_facts() -> dict[str, Any]:
    """The manifest's `nodes` and `ranks` of 128 nodes x 8 GPUs."""
    nodes = {str(k): node_facts(k) for k in range(NODES)}
    ranks = {}
    for rank in range(RANKS):
        k, local = divmod(rank, GPUS)
        gpu = nodes[str(k)]["gpus"][local]
        ranks[str(rank)] = {
            "node": k,
            "host": nodes[str(k)]["host"],
            "local_rank": local,
            "gpu": {"index": local, "uuid": gpu["uuid"], "pci.bus_id": gpu["pci.bus_id"]}
            | {"smi_index": gpu["index"]},
            "cpu_affinity": "0-55,112-167" if local < 4 else "56-111,168-223",
            "numa_node": str(local // 4),
        }
    return {"nodes": nodes, "ranks": ranks}


def manifest(run_id: str, started: str, status: str = "completed") -> dict[str, Any]:
    from distbench.collectors.schema import SCHEMA_VERSION

    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "status": status,
        "started_utc": started,
        "ended_utc": started,
        "command": ["distbench", "sweep", "--config", "ci/sweep-nightly-gpu.toml"],
        "distbench_version": "0.2.0",
        "torch": "2.4.0",
        "nccl": "2.21.5",
        "gpu_count": GPUS,
        **cluster_facts(),
        "launches": [],
    }


def rows_of(run_id: str, cases: list[tuple[str, str, int]], trials: int, iters: int, seed: int):
    """(ResultRow, its rank -1 SampleRows) per case (primitive, dtype, bytes): latency mode
    with `iters` samples per trial (iters > 1), else throughput (one per trial)."""
    from distbench.collectors.schema import ResultRow, SampleRow
    from distbench.stats import Stats, algbw_gbps, row_figures

    rng = np.random.default_rng(seed)
    mode = "latency" if iters > 1 else "throughput"
    for index, (primitive, dtype, size) in enumerate(cases):
        measurement = f"ws{RANKS}/i{index}"
        times = [float(t) for t in rng.lognormal(np.log(30 + size / 2e4), 0.05, trials * iters)]
        stats = Stats(tuple(times))
        factor = FACTORS.get(primitive, (RANKS - 1) / RANKS)
        row = ResultRow(
            **{"run_id": run_id, "label": "", "backend": "nccl", "env": ""},
            host="gpu-node000",
            measurement=measurement,
            primitive=primitive,
            device="cuda",
            world_size=RANKS,
            nnodes=NODES,
            ranks=f"0-{RANKS - 1}",
            dtype=dtype,
            op="sum" if primitive in ("all_reduce", "reduce", "reduce_scatter") else "",
            size_bytes=size,
            requested_bytes=size,
            count=size // 4,
            root="0" if primitive in ("broadcast", "reduce") else "",
            src="",
            dst="",
            pattern="",
            mode=mode,
            timer="cuda_event",
            iters=max(iters, 20),
            warmup=5,
            trials=trials,
            **row_figures(stats, mode == "latency", algbw_gbps(size, stats.p50), factor),
            wrong=0,
            hosts="+".join(f"gpu-node{k:03d}" for k in range(NODES)),
            trials_run=trials,
        )
        per_trial = iters if mode == "latency" else 1
        samples = [
            SampleRow(measurement, -1, i // per_trial, i % per_trial if iters > 1 else -1, t)
            for i, t in enumerate(times)
        ]
        yield row, samples


def write_run(
    path: Path,
    run_id: str,
    cases: list[tuple[str, str, int]],
    trials: int,
    iters: int,
    seed: int,
    manifest_text: str = "",
) -> None:
    """A v4 run directory (--rank-samples off) through distbench's writers; `manifest_text`:
    manifest.json as given, else written by write_manifest."""
    from distbench.collectors.manifest import write_manifest
    from distbench.collectors.schema import ResultRow
    from distbench.collectors.sink import run_sinks
    from distbench.comm.spec import CommSpec
    from distbench.spec import LaunchSpec, RunSpec

    path.mkdir(parents=True)
    made = list(rows_of(run_id, cases, trials, iters, seed))
    with run_sinks(path, ResultRow, run_id, True) as sinks:
        assert sinks is not None  # one write of each file: the same bytes, 2 fsyncs, not 2/row
        sinks.samples.write(sample for _, samples in made for sample in samples)
        sinks.results.write(row for row, _ in made)
    sizes = tuple(sorted({size for _, _, size in cases}))
    primitives = tuple(dict.fromkeys(p for p, _, _ in cases))
    dtypes = tuple(dict.fromkeys(d for _, d, _ in cases))
    modes = ("latency",) if iters > 1 else ("throughput",)
    launch = LaunchSpec(
        backend="nccl",
        device="cuda",
        world_sizes=(RANKS,),
        run_dir=str(path),
        run_id=run_id,
        nnodes=NODES,
        nproc_per_node=GPUS,
        rdzv_endpoint="gpu-node000:29500",
    )
    workload = CommSpec(primitives, sizes, dtypes, modes=modes, iters=max(iters, 20))
    RunSpec(launch, replace(workload, trials=trials)).save(path)
    if manifest_text:
        (path / "manifest.json").write_text(manifest_text)
    else:
        write_manifest(path, manifest(run_id, "2026-01-01T00:00:00Z"))


def latency_cases(sizes: int) -> list[tuple[str, str, int]]:
    """An all_reduce latency sweep: `sizes` sizes from 4 bytes, x2."""
    return [("all_reduce", "float32", 4 << k) for k in range(sizes)]


def nightly_cases() -> list[tuple[str, str, int]]:
    """108 rows: 6 collectives x 9 sizes (1K x 4^k) x 2 dtypes (the GPU nightly's shape)."""
    return [
        (primitive, dtype, 1024 * 4**k)
        for primitive in PRIMITIVES
        for dtype in ("bfloat16", "float32")
        for k in range(9)
    ]


def write_nights(root: Path, nights: int, trials: int) -> list[Path]:
    """`nights` nights from 2026-01-01 of ci/nightly.sh --launches 2 (RUN/launch-1, launch-2),
    108 rows each. One manifest text is made per launch number and its ids replaced per night:
    the writer is the same, packing 128 nodes 730 times would only cost time here."""
    from distbench.collectors.manifest import write_manifest

    made = []
    cases = nightly_cases()
    template = root.parent / "manifest-template"
    template.mkdir(parents=True, exist_ok=True)
    write_manifest(template, manifest("TEMPLATE", "2026-01-01T00:00:00Z"))
    text = (template / "manifest.json").read_text()
    for night in range(nights):
        day = date(2026, 1, 1) + timedelta(days=night)
        run = root / f"nightly-{day:%Y%m%d}"
        for launch in (1, 2):
            run_id = f"{run.name}-launch-{launch}"
            own = text.replace("TEMPLATE", run_id).replace("2026-01-01T", f"{day:%Y-%m-%d}T")
            write_run(run / f"launch-{launch}", run_id, cases, trials, 1, night * 2 + launch, own)
        made.append(run)
    return made


def v3_samples_bytes(run: Path, measurement_rows: int) -> int:
    """samples.csv's bytes as 0.2.0 (v3) wrote the run: its rank -1 rows plus every rank's,
    measured on one measurement's lines for all 1,024 ranks (written, then multiplied)."""
    lines = (run / "samples.csv").read_text().splitlines()
    body = lines[1 : 1 + measurement_rows]
    per_rank = [line.replace(",-1,", f",{rank},", 1) for rank in range(RANKS) for line in body]
    one = sum(len(line) + 1 for line in per_rank)
    measurements = (len(lines) - 1) // measurement_rows
    return (run / "samples.csv").stat().st_size + one * measurements


def manifest_sizes() -> tuple[int, int]:
    """(bytes of the 128-node manifest as 0.2.0 wrote it, bytes as written now)."""
    from distbench.collectors.manifest_pack import pack_manifest

    whole = manifest("r", "2026-01-01T00:00:00Z")
    return len(json.dumps(whole, indent=2)) + 1, len(json.dumps(pack_manifest(whole), indent=2)) + 1
