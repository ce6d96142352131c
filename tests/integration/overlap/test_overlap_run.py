"""`distbench overlap` on real 2-rank gloo groups. The half that launches or runs for seconds; the
in-process half, and the file's whole story: tests/unit/overlap/test_overlap_run.py."""

from __future__ import annotations

import functools
import os
import runpy
import statistics
from pathlib import Path

import pandas as pd
import pytest
import torch

from distbench.collectors.rank_samples import read_rank_samples
from distbench.launch.run import EXIT_FAILED
from distbench.overlap.metrics import overlap_figures
from tests.conftest import run_cli, run_in_process, run_on_gloo_ranks
from tests.paths import INJECT

TINY = ["--backend", "gloo", "--world-sizes", "2", "--sizes", "16K", "--compute", "32"]
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "broadcast")


@pytest.fixture(scope="module")
def overlap_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("overlap") / "run"
    done = run_cli(
        "overlap", *TINY, "--primitives", "allreduce,allgather,reducescatter,broadcast",
        "--compute-threads", "1", "--iters", "3", "--trials", "3", "--warmup", "1", "--check",
        "--out", str(out), "--quiet", "--rank-samples", "node",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    assert "note: gloo has no reduce-scatter" in done.stderr  # it times an all_reduce there
    return out


def results(run: Path) -> pd.DataFrame:
    return pd.read_csv(run / "results.csv", keep_default_na=False)


def test_one_sane_row_per_collective(overlap_run: Path) -> None:
    rows = results(overlap_run)
    assert list(rows["collective"]) == list(COLLECTIVES)
    assert set(rows["primitive"]) == {"overlap"} and (rows["wrong"] == 0).all()
    emulated = {"reduce_scatter": ":via_all_reduce"}  # gloo's, as reducescatter's own rows say
    assert list(rows["pattern"]) == [
        f"{c}:matmul=32:threads=1{emulated.get(c, '')}" for c in COLLECTIVES
    ]
    assert (rows["compute_threads"] == 1).all() and (rows["compute_iters"] >= 1).all()
    for phase in ("compute", "comm", "both", "compute_in_both", "comm_in_both", "comm_completion"):
        assert (rows[f"t_{phase}_us"] > 0).all(), phase
    assert (rows["t_both_us"] == rows["time_us_p50"]).all()
    assert (rows["size_bytes"] == 16384).all() and (rows["samples"] == 3).all()


def test_figures_follow_from_each_rows_own_numbers(overlap_run: Path) -> None:
    for row in results(overlap_run).itertuples():
        tc, tm, tb = float(row.t_compute_us), float(row.t_comm_us), float(row.t_both_us)
        assert row.overlap_efficiency == pytest.approx((tc + tm - tb) / min(tc, tm))
        assert row.compute_slowdown == pytest.approx(float(row.t_compute_in_both_us) / tc)
        completion = float(row.t_comm_completion_us)
        assert row.comm_slowdown == pytest.approx(float(row.t_comm_in_both_us) / completion)
        assert row.osu_overlap_pct == pytest.approx(
            max(0.0, 100 - (tb - float(row.t_compute_in_both_us)) / tm * 100)
        )
        parts = (float(row.t_compute_in_both_us), float(row.t_comm_in_both_us), completion)
        figures = overlap_figures(tc, tm, tb, *parts)
        assert figures.overlap_efficiency == pytest.approx(row.overlap_efficiency)


def test_row_statistics_are_the_slowest_ranks_both_samples(overlap_run: Path) -> None:
    """samples.csv holds the maximum (rank -1) only, every rank's own `both` samples are in the
    node's Parquet file (--rank-samples node), and their maximum is samples.csv's."""
    samples = pd.read_csv(overlap_run / "samples.csv", keep_default_na=False)
    assert set(samples["rank"]) == {-1}
    ranks = read_rank_samples(overlap_run).astype({"measurement": str})
    for row in results(overlap_run).itertuples():
        mine = samples[samples["measurement"] == row.measurement]
        worst = mine.sort_values("trial")["time_us"].tolist()
        own = ranks[ranks["measurement"] == row.measurement]
        per_rank = own.pivot(index="trial", columns="rank", values="time_us")
        assert sorted(per_rank.columns) == [0, 1]
        assert per_rank.max(axis=1).tolist() == pytest.approx(worst)
        assert row.time_us_p50 == pytest.approx(statistics.median(worst))
        assert row.time_us_max == pytest.approx(max(worst))


def test_report_and_compare_accept_overlap_rows(overlap_run: Path, tmp_path: Path) -> None:
    report = run_in_process("report", str(overlap_run), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "report" / "report.md").read_text()
    assert "## Communication while computing (overlap)" in page
    assert "reduce_scatter" in page and "efficiency" in page
    assert (tmp_path / "report" / "fig-overlap.png").stat().st_size > 0
    compare = run_in_process("compare", str(overlap_run), str(overlap_run))
    assert compare.returncode == 0, compare.stdout + compare.stderr
    assert "distbench compare: pass (4 " in compare.stdout  # every row alike: itself


FAULTS = [("all_reduce", "rotate"), ("all_gather", "skip"), ("reduce_scatter", "zero"),
          ("broadcast", "skip")]  # fmt: skip
INJECT = INJECT / "overlap"


@pytest.mark.parametrize(("collective", "fault"), FAULTS[:1])
def test_the_check_in_the_overlapped_phase_catches_a_wrong_result(
    collective: str, fault: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tests/inject/overlap damages what every async_op=True collective returns; the check,
    issued with the compute running, must count wrong elements and fail the run. Through the
    CLI for all_reduce:rotate (a run stops at its first wrong row, comm/runner.py: one fault a
    launch); the other faults on forked ranks below, the same wrapper and the same check."""
    inject = INJECT
    monkeypatch.setenv("PYTHONPATH", f"{inject}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    monkeypatch.setenv("DISTBENCH_TEST_OVERLAP_FAULT", f"{collective}:{fault}")
    out = tmp_path / "run"
    done = run_cli(
        "overlap", *TINY, "--primitives", collective, "--compute-iters", "1", "--iters", "1",
        "--trials", "1", "--warmup", "0", "--check", "--out", str(out), "--quiet",
    )  # fmt: skip
    assert done.returncode == EXIT_FAILED, done.stderr + done.stdout
    assert "wrong elements" in done.stderr
    assert int(results(out)["wrong"].iloc[0]) > 0


def wrong_under_fault(collective: str, fault: str, rank: int, world_size: int) -> int:
    """A forked rank of a real gloo group with tests/inject/overlap installed as a worker's
    sitecustomize installs it; one overlap case as the worker runs it (TINY: 16K, compute 32,
    1 matmul, 1 iter, 1 trial, no warm-up, --check): its `wrong`, summed over ranks."""
    from distbench.overlap.ops import build_collective
    from distbench.overlap.runner import run_case
    from distbench.overlap.spec import OverlapSpec
    from distbench.primitives.base import Context

    os.environ.update(RANK=str(rank), DISTBENCH_TEST_OVERLAP_FAULT=f"{collective}:{fault}")
    runpy.run_path(str(INJECT / "sitecustomize.py"))
    workload = OverlapSpec(
        sizes=(16 * 1024,), primitives=(collective,), compute=(32,), compute_iters=1, iters=1,
        trials=1, warmup=0, check=True,
    )  # fmt: skip
    ctx = Context(rank, world_size, torch.device("cpu"), "gloo", None, tuple(range(world_size)))
    collective_ops = build_collective(collective, ctx, 16 * 1024)
    _, _, _, wrong = run_case(ctx, workload, collective_ops, 32, "throughput")
    return wrong


@pytest.mark.parametrize(("collective", "fault"), FAULTS[1:])
def test_the_overlapped_check_counts_wrong_elements_under_each_other_fault(
    collective: str, fault: str, tmp_path: Path
) -> None:
    """The row's `wrong` of the faults not run through the CLI: above 0 on every rank (the sum
    over ranks), which fails the run as all_reduce:rotate does above."""
    work = functools.partial(wrong_under_fault, collective, fault)
    for wrong in run_on_gloo_ranks(work, 2, tmp_path / "store"):
        assert wrong > 0
