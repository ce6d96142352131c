"""`distbench ddp` on real gloo groups. The half that launches or runs for seconds; the in-process
half, and the file's whole story: tests/unit/ddp/test_ddp.py."""

from __future__ import annotations

import csv
import gc
import json
import math
import os
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from distbench.collectors.rank_samples import read_rank_samples
from distbench.collectors.schema import DdpRow, SampleRow, column_names
from distbench.ddp.models import build_batches
from distbench.ddp.runner import measure
from distbench.ddp.spec import BUCKET_SWEPT, STRATEGIES, DdpSpec, StrategyRun
from distbench.primitives.base import Context
from tests.conftest import run_cli

EQUIVALENT = ("grad-avg", "grad-avg-flat", "param-avg", "ddp-nooverlap")
"""With plain SGD and param-avg's K = 1 these compute DDP's update, up to float rounding."""

ULPS_PER_STEP = 4
"""Tolerance, in float32 ulps of the largest parameter, per training step. The strategies differ
only in where the 1/n is applied and in what is summed (gradients or updated parameters), each a
rounding of at most an ulp or so per step; a real difference (an un-averaged gradient, a bf16
rounding) is orders of magnitude larger, as ddp-nocomm and ddp-bf16 show in the same test."""


def _equivalence_rank(rank: int, world_size: int, init_file: str, out: str) -> None:
    """One rank: train each strategy from the same seeded weights on the same shards."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    dist.init_process_group(
        "gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size
    )
    try:
        ctx = Context(rank, world_size, torch.device("cpu"), "gloo", None, tuple(range(world_size)))
        report: dict[str, dict[str, float]] = {}
        for model, width in (("mlp", 24), ("transformer", 16)):
            spec = DdpSpec(model=model, width=width, depth=2, batch_size=8, steps=6, warmup=2)
            batches = build_batches(spec, rank, ctx.device)
            _, reference = measure(StrategyRun("ddp", 25.0), "ref", spec, ctx, batches, None)
            diffs = {"max_abs_param": float(reference.abs().max())}
            runs = [StrategyRun(s, None) for s in EQUIVALENT]
            runs += [StrategyRun("ddp-nocomm", 25.0), StrategyRun("ddp-bf16", 25.0)]
            for run in runs:
                trained, _ = measure(run, run.strategy, spec, ctx, batches, reference)
                diffs[run.strategy] = trained.max_param_diff
            report[model] = diffs
        if rank == 0:
            Path(out).write_text(json.dumps(report))
        gc.collect()  # as run_ddp does: no DDP reducer left for interpreter exit
        dist.barrier()
    finally:
        dist.destroy_process_group()


@pytest.mark.slow
def test_manual_strategies_match_ddp_on_two_gloo_ranks(tmp_path: Path) -> None:
    out = tmp_path / "diffs.json"
    mp.spawn(_equivalence_rank, args=(2, str(tmp_path / "init"), str(out)), nprocs=2, join=True)
    report = json.loads(out.read_text())
    steps = 2 + 6
    for model, diffs in report.items():
        ulp = torch.finfo(torch.float32).eps * diffs["max_abs_param"]
        tolerance = ULPS_PER_STEP * steps * ulp
        for strategy in EQUIVALENT:
            assert diffs[strategy] <= tolerance, (model, strategy, diffs)
        # The tolerance tells real differences apart: local gradients and bf16 rounding exceed it.
        assert diffs["ddp-nocomm"] > 100 * tolerance, (model, diffs)
        assert diffs["ddp-bf16"] > tolerance, (model, diffs)


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_every_strategy_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "run"
    steps = 3
    result = run_cli(
        "ddp",
        "--backend",
        "gloo",
        "--world-sizes",
        "1,2",
        "--rank-samples",
        "all",
        "--strategies",
        "all",
        "--width",
        "16",
        "--depth",
        "2",
        "--batch-size",
        "4",
        "--steps",
        str(steps),
        "--warmup",
        "1",
        "--bucket-mb",
        "0.001,25",
        "--label",
        "e2e",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr + result.stdout
    assert "# ddp  model=mlp params=442  batch=4/rank  backend=gloo" in result.stdout

    with open(out / "results.csv", newline="") as handle:
        assert next(csv.reader(handle)) == column_names(DdpRow)
    rows = read_csv(out / "results.csv")
    per_launch = len(STRATEGIES) + len(BUCKET_SWEPT)  # those once per bucket size
    assert [r["world_size"] for r in rows] == ["1"] * per_launch + ["2"] * per_launch
    for row in rows:
        assert row["primitive"] == "ddp" and row["model"] == "mlp" and row["params"] == "442"
        assert row["label"] == "e2e" and row["timer"] == "perf_counter"
        # Fewer than 10 steps: windows of one step, one sample each.
        assert (row["samples"], row["steps"], row["window_steps"]) == (str(steps), str(steps), "1")
        assert float(row["step_time_us_p50"]) > 0 and float(row["samples_per_s"]) > 0
        assert float(row["scaling_efficiency"]) > 0  # world size 1 is in the run
        ddp_family = row["strategy"].startswith("ddp")
        assert (row["bucket_mb"] != "") == ddp_family
        assert (row["static_graph"] == "false") == ddp_family
        assert (row["avg_every"] == "1") == (row["strategy"] == "param-avg")
        # ddp-nocomm is in the run; at one rank nothing crosses a wire.
        assert (row["comm_share"] != "") == (row["world_size"] == "2")
    one = {(r["strategy"], r["bucket_mb"]): r for r in rows if r["world_size"] == "1"}
    two = {(r["strategy"], r["bucket_mb"]): r for r in rows if r["world_size"] == "2"}
    assert set(one) == set(two) and len(one) == per_launch
    assert all(float(r["scaling_efficiency"]) == 1.0 for r in one.values())
    for r in one.values():  # nothing to hide, nothing moved on one rank: empty, not a number
        assert r["comm_hidden_share"] == r["comm_busbw_GBps"] == r["comm_share"] == ""
        assert r["comm_bytes_per_step"] == r["allgather_bytes_per_step"] == ""
    one_rank = result.stdout.split("world_size=1", 1)[1].split("world_size=2", 1)[0]
    ddp_line = next(line for line in one_rank.splitlines() if line.startswith("ddp "))
    assert ddp_line.split()[5] == "-", ddp_line  # comm_MB, as busbw_GBps beside it
    nocomm = float(two[("ddp-nocomm", "0.001")]["step_time_us_mean"])
    for bucket in ("0.001", "25"):  # ddp against ddp-nooverlap of its bucket size
        reference = float(two[("ddp-nooverlap", bucket)]["step_time_us_mean"])
        step = float(two[("ddp", bucket)]["step_time_us_mean"])
        hidden = [two[(s, bucket)]["comm_hidden_share"] for s in ("ddp", "ddp-nooverlap")]
        if reference > nocomm:  # else nothing exposed to hide: both empty
            assert float(hidden[0]) == pytest.approx(1 - (step - nocomm) / (reference - nocomm))
            assert float(hidden[1]) == 0.0  # the reference itself
        else:
            assert hidden == ["", ""]
    assert two[("ddp", "0.001")]["max_param_diff"] == "0.0"  # the reference
    for strategy in ("grad-avg", "grad-avg-flat", "param-avg"):
        assert float(two[(strategy, "")]["max_param_diff"]) < 1e-6
    assert float(two[("ddp-nocomm", "0.001")]["max_param_diff"]) > 1e-5
    assert two[("ddp-nocomm", "0.001")]["comm_bytes_per_step"] == "0"
    assert two[("ddp", "25")]["comm_bytes_per_step"] == str(442 * 4)
    assert two[("ddp-bf16", "25")]["comm_bytes_per_step"] == str(442 * 2)
    for strategy, bucket in [("grad-avg-flat", ""), ("param-avg", ""), ("ddp-bf16", "25")]:
        assert two[(strategy, bucket)]["comm_hidden_share"] == ""  # no reference: other messages
    assert two[("ddp-nocomm", "0.001")]["comm_hidden_share"] == ""
    # each strategy's exposed communication is its step minus its own no-communication step
    local = float(two[("local", "")]["step_time_us_mean"])
    assert two[("local", "")]["comm_bytes_per_step"] == "0"
    for (strategy, _bucket), row in two.items():
        base = {"ddp": nocomm, "loc": local}[row["comm_baseline"][:3]]
        assert row["comm_baseline"] == ("ddp-nocomm" if strategy.startswith("ddp") else "local")
        step = float(row["step_time_us_mean"])
        assert float(row["comm_share"]) == pytest.approx((step - base) / step), strategy

    samples = read_csv(out / "samples.csv")
    per_rank = read_rank_samples(out)
    per_rank["measurement"] = per_rank["measurement"].astype(str)
    assert list(samples[0]) == column_names(SampleRow)
    measurements = {r["measurement"] for r in rows}
    assert {s["measurement"] for s in samples} == measurements
    for row in rows:
        mine = [s for s in samples if s["measurement"] == row["measurement"]]
        assert {s["rank"] for s in mine} == {"-1"}  # samples.csv: the max over ranks
        own = per_rank[per_rank["measurement"] == row["measurement"]]  # --rank-samples all
        assert sorted(set(own["rank"])) == list(range(int(row["world_size"])))
        maxed = [s for s in mine if s["rank"] == "-1"]  # one per window
        assert [(s["trial"], s["iter"], s["loss"]) for s in maxed] == [
            (str(w), "-1", "") for w in range(steps)
        ]
        assert max(float(s["time_us"]) for s in maxed) == pytest.approx(
            float(row["step_time_us_max"])
        )
        assert len(own) == steps * int(row["world_size"])  # per rank, one per step, its loss
        assert (own["trial"] == own["iter"]).all()  # windows of one step
        assert all(math.isfinite(loss) and loss > 0 for loss in own["loss"])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    assert [launch["returncode"] for launch in manifest["launches"]] == [0, 0]
    samples = read_csv(out / "samples.csv")  # ddp's samples carry their run
    assert samples and {s["run_id"] for s in samples} == {out.name}


@pytest.mark.slow
def test_resume_writes_only_the_missing_rows(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["ddp", "--backend", "gloo", "--world-sizes", "2", "--strategies", "ddp,grad-avg"]
    args += ["--width", "8", "--depth", "2", "--steps", "2", "--warmup", "0", "--out", str(out)]
    first = run_cli(*args)
    assert first.returncode == 0, first.stderr
    # ddp shows its progress too: one line per finished measurement, one table (in a pipe)
    done = [line for line in first.stderr.splitlines() if "] done " in line]
    assert len(done) == 2, first.stderr
    assert done[0].startswith("[1/2] done ddp ddp model=mlp"), done
    assert done[0].endswith(")") and "world_size=2" in done[0]
    assert first.stdout.count("# ddp") == 1
    # Cut the run after its first measurement, as an interrupted run leaves it.
    lines = (out / "results.csv").read_text().splitlines()
    (out / "results.csv").write_text("\n".join(lines[:2]) + "\n")
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted"}))
    result = run_cli("ddp", "--resume", str(out))
    assert result.returncode == 0, result.stderr + result.stdout
    rows = read_csv(out / "results.csv")
    assert [(r["measurement"], r["strategy"]) for r in rows] == [
        ("ws2/i0", "ddp"),
        ("ws2/i1", "grad-avg"),
    ]
    maxed = [s for s in read_csv(out / "samples.csv") if s["rank"] == "-1"]
    assert [s["measurement"] for s in maxed] == ["ws2/i0"] * 2 + ["ws2/i1"] * 2


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_ddp_nccl_uses_cuda_events(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run_cli(
        "ddp",
        "--backend",
        "nccl",
        "--world-sizes",
        "1",
        "--steps",
        "5",
        "--warmup",
        "2",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr + result.stdout
    rows = read_csv(out / "results.csv")
    assert len(rows) == len(STRATEGIES)
    for row in rows:
        assert row["backend"] == "nccl" and row["device"] == "cuda"
        assert row["timer"] == "cuda_event" and float(row["step_time_us_p50"]) > 0
