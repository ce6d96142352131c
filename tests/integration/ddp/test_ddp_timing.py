"""DDP step times on real 2-rank gloo groups. The half that launches or runs for seconds; the
in-process half, and the file's whole story: tests/unit/ddp/test_ddp_timing.py."""

import csv
import gc
import json
import os
from collections import defaultdict
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from distbench.collectors.rank_samples import read_rank_samples
from distbench.ddp import metrics as ddp_metrics
from distbench.ddp.models import build_batches, build_model
from distbench.ddp.spec import DdpSpec, StrategyRun
from distbench.ddp.steps import train
from distbench.ddp.strategies import build_strategy
from distbench.primitives.base import Context
from distbench.stats import Stats
from tests.conftest import run_cli

WALL_CLOCK_TOLERANCE = 0.12
"""#10: a row's mean step time x steps is at least the slowest rank's wall clock (arithmetic: a sum
of per-window maxima) and over it by at most 12 %: the ranks' barrier-exit skew, once per window.
Quiet box 0.0-0.7 %; beside a CPU hog 4.4 %; CI once 4.6 % (stop 32); a clean-clone rehearsal
7.9 % (2026-12-03, 55 ms a window: the 6 % this was failed). A sanity bound against gross errors,
not the definition: what pins that is the exact check below it (each rank -1 sample is the
slowest rank's window over its steps, to 1e-9), which v1's per-step maximum fails."""


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def run_ddp(out: Path, *args: str) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    result = run_cli(
        "ddp", "--backend", "gloo", "--world-sizes", "2", "--rank-samples", "all", "--out",
        str(out), *args,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr + result.stdout
    own = read_rank_samples(out)  # every rank's own step times (--rank-samples all)
    rows = [{k: str(v) for k, v in r.items()} for r in own.to_dict(orient="records")]
    return read_csv(out / "results.csv"), read_csv(out / "samples.csv") + rows


def rank_step_times(samples: list[dict[str, str]], measurement: str) -> dict[int, list[float]]:
    """rank -> its own step times, in step order (the rank's own rows, rank-samples/)."""
    steps: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for s in samples:
        if s["measurement"] == measurement and s["rank"] != "-1":
            steps[int(s["rank"])].append((int(s["iter"]), float(s["time_us"])))
    return {rank: [t for _, t in sorted(rows)] for rank, rows in steps.items()}


@pytest.mark.slow
def test_mean_step_time_times_steps_is_the_slowest_ranks_wall_clock(tmp_path: Path) -> None:
    """Each rank records its own time per step (its rows in rank-samples/ add up to its wall clock
    of the timed steps). The row's mean step time x steps must be at least the slowest rank's
    total and over it by no more than WALL_CLOCK_TOLERANCE; the per-step maximum over ranks that
    v1 used overstated it by 4-15 %, and the exact per-window check below fails it outright.

    Five windows of 32 steps (--window-steps 32; the auto rule that picks 32 for 320 steps is
    checked in-process below) and three strategies, one of each kind: no communication,
    DDP's messages without overlap, and manual averaging (plain `ddp` has no check of its own
    here). The tolerance is per window, so fewer windows loosen nothing.

    The model is wide enough, and the windows long enough (32 steps, about 0.7 s), that a busy
    2-core box's scheduling jitter mostly stays small: the sum of per-window maxima exceeds
    the slowest rank's total by the ranks' barrier-exit skew once per window (no one rank is the
    slowest in every window, so that total is below the job's wall clock, which the maxima
    follow). Windows of 2 steps came out 3.2 % over on a quiet box, windows of 8 in the
    clean-clone CI once (3.2 %), windows of 16 at 4.4 % beside a CPU hog (0.0-0.7 % quiet),
    windows of 32 at 4.6 % in CI and 7.9 % in a rehearsal."""
    steps, batch, n_windows = 160, 64, 5
    rows, samples = run_ddp(
        tmp_path / "run",
        *("--strategies", "ddp-nocomm,ddp-nooverlap,grad-avg-flat"),
        *("--width", "1024", "--depth", "4", "--batch-size", str(batch)),
        *("--steps", str(steps), "--warmup", "3", "--window-steps", "32"),
    )
    assert len(rows) == 3
    for row in rows:
        measurement, window = row["measurement"], int(row["window_steps"])
        assert (window, row["samples"], row["steps"]) == (32, str(n_windows), str(steps))
        own = rank_step_times(samples, measurement)
        assert sorted(own) == [0, 1] and all(len(times) == steps for times in own.values())
        slowest_wall_clock = max(sum(times) for times in own.values())
        mean = float(row["step_time_us_mean"])
        assert mean * steps >= slowest_wall_clock * (1 - 1e-9), row
        assert mean * steps <= slowest_wall_clock * (1 + WALL_CLOCK_TOLERANCE), row
        # rank -1: one sample per window, the slowest rank's window / steps in it.
        maxed = [s for s in samples if s["measurement"] == measurement and s["rank"] == "-1"]
        assert [(s["trial"], s["iter"]) for s in maxed] == [
            (str(w), "-1") for w in range(n_windows)
        ]
        for w, sample in enumerate(maxed):
            windows = [sum(times[w * window : (w + 1) * window]) for times in own.values()]
            assert float(sample["time_us"]) == pytest.approx(max(windows) / window, rel=1e-9)
        assert Stats(tuple(float(s["time_us"]) for s in maxed)).mean == pytest.approx(mean)
        # Work over total time: the rate is the mean's.
        assert float(row["samples_per_s"]) == pytest.approx(2 * batch / (mean * 1e-6), rel=1e-9)
    by_strategy = {r["strategy"]: r for r in rows}
    assert by_strategy["ddp-nooverlap"]["comm_hidden_share"] in ("0.0", "")  # the reference
    assert by_strategy["grad-avg-flat"]["comm_hidden_share"] == ""  # other messages


@pytest.mark.slow
def test_a_periodic_strategys_rates_come_from_the_mean_step_time(tmp_path: Path) -> None:
    """param-avg --avg-every 4 communicates on one step in four: with one step per window, the p50
    is a step that sends nothing. samples_per_s, comm_share and comm_busbw_GBps must describe the
    whole job (mean step time), not that step."""
    batch = 4
    rows, _ = run_ddp(
        tmp_path / "run",
        *("--strategies", "local,param-avg", "--avg-every", "4"),
        *("--width", "512", "--depth", "3", "--batch-size", str(batch)),
        *("--steps", "16", "--warmup", "3", "--window-steps", "1"),
    )
    local, param_avg = rows
    assert param_avg["strategy"] == "param-avg" and param_avg["avg_every"] == "4"
    assert param_avg["samples"] == "16" and param_avg["window_steps"] == "1"
    mean, p50 = float(param_avg["step_time_us_mean"]), float(param_avg["step_time_us_p50"])
    assert mean > 1.2 * p50  # the case tells the two apart: a quarter of the steps communicate
    rate = float(param_avg["samples_per_s"])
    assert rate == pytest.approx(2 * batch / (mean * 1e-6), rel=1e-9)
    # The shares too, against param-avg's own baseline: local, the same step with nothing sent
    # (on a busy box it can still be slower than param-avg: then nothing is exposed, busbw empty).
    assert param_avg["comm_baseline"] == "local"
    local_mean = float(local["step_time_us_mean"])
    assert float(param_avg["comm_share"]) == pytest.approx((mean - local_mean) / mean)
    comm_bytes, exposed_us = int(param_avg["comm_bytes_per_step"]), mean - local_mean
    busbw = comm_bytes / (exposed_us * 1e-6) / 1e9 if exposed_us > 0 else None  # x 2(n-1)/n = 1
    cell = param_avg["comm_busbw_GBps"]
    assert (float(cell) if cell else None) == (pytest.approx(busbw) if busbw else None)


HIDDEN_SHARE_CASE = {
    "width": 512,
    "depth": 16,
    "batch_size": 2,
    "steps": 40,
    "warmup": 4,
    "window_steps": 2,
}
"""32 parameter tensors, 15.8 MB of gradients in two DDP buckets (the first closes past 1 MB):
ddp's messages differ from grad-avg's 32. Batch 2 keeps the compute small, so communication
dominates and a busy box's jitter stays small against it."""


def blocking_hook(
    process_group: dist.ProcessGroup, bucket: dist.GradBucket
) -> torch.futures.Future[torch.Tensor]:
    """DDP's bucket average, all_reduced synchronously inside the hook, so backward waits for
    it: ddp's messages, none overlapped (written apart from ddp-nooverlap's hook)."""
    tensor = bucket.buffer()
    dist.all_reduce(tensor.div_(dist.get_world_size(process_group)), group=process_group)
    done: torch.futures.Future[torch.Tensor] = torch.futures.Future()
    done.set_result(tensor)
    return done


def _hidden_share_rank(rank: int, world_size: int, init_file: str, out: str) -> None:
    """Step times (median over 20 windows) of ddp-nocomm, ddp-nooverlap, a DDP with the test's
    blocking hook and grad-avg. Their windows take turns (round robin), so a drifting machine load
    falls on each alike, and the median leaves out the few windows a busy box preempts (the rows
    use means, as the tests above check; here the reference's messages are under test)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size
    )
    try:
        ctx = Context(rank, world_size, torch.device("cpu"), "gloo", None, tuple(range(world_size)))
        spec = DdpSpec(**HIDDEN_SHARE_CASE)
        batches = build_batches(spec, rank, ctx.device)
        steppers = {}
        for name in ("ddp-nocomm", "blocking", "ddp-nooverlap", "grad-avg"):
            model = build_model(spec, ctx.device)
            run = StrategyRun("ddp" if name == "blocking" else name, 25.0)
            strategy = build_strategy(run, model, ctx, spec)
            if name == "blocking":
                strategy.module.register_comm_hook(ctx.group, blocking_hook)
            optimizer = torch.optim.SGD(model.parameters(), lr=spec.lr)
            steppers[name] = (strategy, optimizer)
        window = spec.window_length()
        windows: dict[str, list[float]] = defaultdict(list)
        for start in range(0, len(batches), window):
            for name, (strategy, optimizer) in steppers.items():
                timed = train(
                    strategy.module,
                    strategy.after_backward,
                    strategy.after_step,
                    optimizer,
                    batches[start : start + window],
                    0,
                    window,
                    ctx,
                )
                if start >= spec.warmup:  # warm-up windows are run and left out
                    windows[name] += timed.window_step_us
        if rank == 0:
            Path(out).write_text(json.dumps({k: Stats(tuple(v)).p50 for k, v in windows.items()}))
        del steppers
        gc.collect()  # no DDP reducer left for interpreter exit
        dist.barrier()
    finally:
        dist.destroy_process_group()


@pytest.mark.slow
def test_a_strategy_that_cannot_overlap_hides_no_communication(tmp_path: Path) -> None:
    """A DDP whose bucket all_reduces block backward sends ddp's messages with nothing hidden.
    Against ddp-nooverlap (the same messages, none overlapped) its comm_hidden_share reads
    about 0. v1's `overlap`, against grad-avg's 32 per-parameter messages, credited such a
    strategy with the gain from fewer, bigger messages."""
    out = tmp_path / "medians.json"
    mp.spawn(_hidden_share_rank, args=(2, str(tmp_path / "init"), str(out)), nprocs=2, join=True)
    times = json.loads(out.read_text())
    nocomm, reference = times["ddp-nocomm"], times["ddp-nooverlap"]
    assert reference - nocomm > 0.2 * reference, times  # the case is communication-bound
    hidden = ddp_metrics.comm_hidden_share(2, times["blocking"], nocomm, reference)
    assert abs(hidden) < 0.2, (hidden, times)
    assert ddp_metrics.comm_hidden_share(2, reference, nocomm, reference) == 0.0
    # v1's formula, against grad-avg, read this strategy as mostly "overlapped".
    v1_overlap = 1 - (times["blocking"] - nocomm) / (times["grad-avg"] - nocomm)
    assert v1_overlap > 0.3, (v1_overlap, times)
