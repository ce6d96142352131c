"""`distbench ddp --strategies fsdp,fsdp-reshard-false` (FSDP2 fully_shard) on real gloo groups. The
half that launches or runs for seconds; the in-process half, and the file's whole story:
tests/unit/ddp/test_fsdp.py."""

from __future__ import annotations

import csv
import gc
import json
import os
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from distbench.ddp.fsdp import bytes_per_step
from distbench.ddp.models import build_batches, build_model
from distbench.ddp.runner import measure
from distbench.ddp.spec import DdpSpec, StrategyRun
from distbench.primitives.base import Context
from tests.conftest import run_cli, run_in_process

FSDP = ("fsdp", "fsdp-reshard-false")

ULPS_PER_STEP = 4
"""As for the manual strategies (tests/integration/ddp/test_ddp.py): FSDP2 reduce-scatters the same
gradients DDP all-reduces and divides by n, so each step may differ by a rounding of an ulp or so
of the largest parameter (the order of a sum over ranks); a missing average (ddp-nocomm) is orders
of magnitude larger."""


def _equivalence_rank(rank: int, world_size: int, init_file: str, out: str) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    dist.init_process_group(
        "gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size
    )
    try:
        ctx = Context(rank, world_size, torch.device("cpu"), "gloo", None, tuple(range(world_size)))
        report: dict[str, dict[str, object]] = {}
        for model, width in (("mlp", 24), ("transformer", 16)):
            spec = DdpSpec(model=model, width=width, depth=2, batch_size=8, steps=6, warmup=2)
            batches = build_batches(spec, rank, ctx.device)
            _, reference = measure(StrategyRun("ddp", 25.0), "ref", spec, ctx, batches, None)
            diffs: dict[str, object] = {"max_abs_param": float(reference.abs().max())}
            for name in (*FSDP, "ddp-nocomm"):
                run = StrategyRun(name, 25.0 if name == "ddp-nocomm" else None)
                trained, final = measure(run, name, spec, ctx, batches, reference)
                diffs[name] = trained.max_param_diff
                diffs[name + ":bytes"] = list(trained.fsdp_bytes)
                diffs[name + ":mem"] = list(trained.peak_mem)
                diffs[name + ":numel"] = final.numel()
            report[model] = diffs
        if rank == 0:
            Path(out).write_text(json.dumps(report))
        gc.collect()
        dist.barrier()
    finally:
        dist.destroy_process_group()


@pytest.mark.slow
def test_fsdp_trains_ddps_weights_on_two_gloo_ranks(tmp_path: Path) -> None:
    out = tmp_path / "diffs.json"
    mp.spawn(_equivalence_rank, args=(2, str(tmp_path / "init"), str(out)), nprocs=2, join=True)
    report = json.loads(out.read_text())
    steps = 2 + 6
    for model, diffs in report.items():
        ulp = torch.finfo(torch.float32).eps * diffs["max_abs_param"]
        tolerance = ULPS_PER_STEP * steps * ulp
        for name in FSDP:
            assert diffs[name] <= tolerance, (model, name, diffs)
            # the full parameters were gathered: as many as the unsharded model has
            assert diffs[name + ":numel"] == diffs["ddp-nocomm:numel"], (model, diffs)
            peak, source = diffs[name + ":mem"]
            assert source == "rss_hwm" and peak > 0, (model, name, diffs)
        assert diffs["ddp-nocomm"] > 100 * tolerance, (model, diffs)
        assert diffs["ddp-nocomm:bytes"] == [0, 0]
        gathered, scattered = diffs["fsdp:bytes"]
        kept, scattered_kept = diffs["fsdp-reshard-false:bytes"]
        assert scattered == scattered_kept > 0
        # the MLP's root holds no parameters; the transformer's head is gathered once in both
        assert gathered == 2 * kept if model == "mlp" else kept < gathered < 2 * kept


@pytest.mark.slow
def test_fsdp_rows_end_to_end_and_in_the_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["ddp", "--backend", "gloo", "--world-sizes", "2", "--width", "16", "--depth", "3"]
    args += ["--strategies", "ddp,ddp-nocomm,fsdp,fsdp-reshard-false", "--steps", "4"]
    result = run_cli(*args, "--batch-size", "4", "--warmup", "1", "--out", str(out))
    assert result.returncode == 0, result.stderr + result.stdout
    with open(out / "results.csv", newline="") as handle:
        rows = {r["strategy"]: r for r in csv.DictReader(handle)}
    assert list(rows) == ["ddp", "ddp-nocomm", "fsdp", "fsdp-reshard-false"]
    params = int(rows["ddp"]["params"])
    # mlp width 16, depth 3: Linear(16, 16) x 2 and Linear(16, 10), every dim 0 even: no padding
    model = build_model(DdpSpec(model="mlp", width=16, depth=3), torch.device("cpu"))
    block_bytes = bytes_per_step(model, "fsdp-reshard-false", 2)[1]
    assert int(rows["fsdp"]["reduce_scatter_bytes_per_step"]) == block_bytes == params * 4
    assert int(rows["fsdp"]["allgather_bytes_per_step"]) == 2 * block_bytes
    assert int(rows["fsdp-reshard-false"]["allgather_bytes_per_step"]) == block_bytes
    for name in FSDP:
        row = rows[name]
        total = int(row["allgather_bytes_per_step"]) + int(row["reduce_scatter_bytes_per_step"])
        assert int(row["comm_bytes_per_step"]) == total
        assert float(row["max_param_diff"]) < 1e-5
        assert row["bucket_mb"] == row["static_graph"] == ""
    for row in rows.values():
        assert row["mem_source"] == "rss_hwm" and float(row["peak_mem_bytes"]) > 0
        # A few MB for this model; the first strategy (ddp) carried the process's one-off
        # allocations of its first backward (~85 MB) before runner.settle_memory.
        assert float(row["peak_mem_bytes"]) < 30e6, (row["strategy"], row["peak_mem_bytes"])
    assert rows["ddp"]["allgather_bytes_per_step"] == "0"
    report = run_in_process("report", str(out), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr + report.stdout
    markdown = (tmp_path / "report" / "report.md").read_text()
    table = [line.strip("| ").split(" | ") for line in markdown.splitlines() if line[:2] == "| "]
    header = next(cells for cells in table if "all-gathered MB/step" in cells)
    cells = {
        cells[header.index("strategy")]: cells
        for cells in table
        if len(cells) == len(header) and "fsdp" in cells[header.index("strategy")]
    }
    assert sorted(cells) == ["fsdp", "fsdp-reshard-false"]
    for name, row in cells.items():
        megabytes = int(rows[name]["allgather_bytes_per_step"]) / 1e6
        assert float(row[header.index("all-gathered MB/step")]) == pytest.approx(megabytes, 1e-3)
        assert row[header.index("peak mem MB")].endswith("(rss_hwm)")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_fsdp_on_nccl_reports_cuda_peak_memory(tmp_path: Path) -> None:
    """On CUDA the peak is the caching allocator's (one GPU: one rank; gpu-smoke runs more)."""
    out = tmp_path / "run"
    args = ["ddp", "--backend", "nccl", "--world-sizes", "1", "--model", "transformer"]
    args += ["--strategies", "ddp,fsdp,fsdp-reshard-false", "--steps", "4", "--out", str(out)]
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr + result.stdout
    with open(out / "results.csv", newline="") as handle:
        rows = {r["strategy"]: r for r in csv.DictReader(handle)}
    for row in rows.values():
        assert row["device"] == "cuda" and row["mem_source"] == "cuda_max_allocated"
        assert float(row["peak_mem_bytes"]) > 0
    for name in FSDP:
        assert float(rows[name]["max_param_diff"]) < 1e-5
