"""--cuda-graph N and --buffers symmetric (#15 §5) on a box without a GPU. The half that launches or
runs for seconds; the in-process half, and the file's whole story:
tests/unit/comm/test_graph_modes.py."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from distbench.comm.gpu_modes import GRAPH_PRIMITIVES
from distbench.comm.static import build_static, case_labels, check_static, regular_buffers
from distbench.primitives.base import CaseRequest, Context
from tests.conftest import CliRun, run_in_process, run_on_gloo_ranks
from tests.mutation.corrupt import REDUCING, corrupted, mutations

# --- the checks of static buffers on a real group, as they are and mutated ----------------------

OPTIONS: dict[str, list[dict[str, Any]]] = {
    "all_gather": [{"placements": ["out", "in"]}],
    "reduce_scatter": [{"placements": ["out", "in"]}],
    "all_to_allv": [{"skew": "zipf:1.5", "seed": 1}],
}


def static_checks(rank: int, world_size: int) -> dict[str, int]:
    """{case/mutation: wrong elements summed over ranks}; 'none' is the check unmutated."""
    ctx = Context(rank, world_size, torch.device("cpu"), "gloo", None, (0, 1, 2))
    local: dict[str, int] = {}
    for primitive in GRAPH_PRIMITIVES:
        for options in OPTIONS.get(primitive, [{}]):
            request = CaseRequest(world_size * 128, torch.float32, "sum", "all", options)
            for labels in case_labels(primitive, request, world_size):
                static = build_static(ctx, primitive, request, labels, regular_buffers(ctx))
                name = f"{primitive}/{labels}"
                local[f"{name}/none"] = check_static(static)
                in_place = labels.get("placement") == "in"
                for mutation in mutations(primitive, "sum", ("sum", "max")):
                    if mutation == "lose1" and primitive in REDUCING and in_place:
                        continue  # as the mutation suite: the buffer held the right element
                    with corrupted(primitive, mutation, ctx):
                        local[f"{name}/{mutation}"] = check_static(static)
    total = torch.tensor(list(local.values()), dtype=torch.int64)
    dist.all_reduce(total)
    return dict(zip(local, total.tolist(), strict=True))


def test_static_checks_pass_right_results_and_catch_every_mutation(tmp_path: Path) -> None:
    results = run_on_gloo_ranks(static_checks, 3, tmp_path / "store")
    wrong = results[0]
    assert all(result == wrong for result in results)
    right = {name: n for name, n in wrong.items() if name.endswith("/none")}
    assert len(right) == 1 + 3 + 2 + 2 + 1 + 1  # reduce, 3 roots, 2 placements x 2, a2a, a2av
    assert set(right.values()) == {0}, right
    missed = [name for name, n in wrong.items() if not name.endswith("/none") and n == 0]
    assert not missed, missed
    assert len(wrong) > 5 * len(right)  # every case met several mutations


# --- rows on gloo: the columns and their defaults, an older run, report and compare -------------


def test_gloo_rows_carry_graph_and_buffers_with_their_defaults(
    allreduce_2rank: CliRun, tmp_path: Path
) -> None:
    """The suite's shared 2-rank allreduce (tests/conftest.py: --check, 1K,64K, both modes)."""
    out = allreduce_2rank.out
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == 4
    assert {(r["graph"], r["buffers"], r["timer"]) for r in rows} == {
        ("false", "regular", "perf_counter")
    }
    report = run_in_process("report", str(out), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr[-3000:]
    compare = run_in_process("compare", str(out), str(out))
    assert compare.returncode == 0, compare.stdout[-3000:] + compare.stderr[-3000:]
    # the rows a GPU run writes (made here by editing a copy): report names them apart, compare
    # never sets them against eager rows on regular buffers
    gpu = tmp_path / "gpu"
    shutil.copytree(out, gpu)
    for row in rows:
        row.update(graph="true", buffers="symmetric", timer="cuda_event+graph")
    with open(gpu / "results.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    both = run_in_process("report", str(out), str(gpu), "--out", str(tmp_path / "both"))
    assert both.returncode == 0, both.stderr[-3000:]
    page = (tmp_path / "both" / "report.md").read_text()
    assert "| graph | buffers |" in page and "| true | symmetric |" in page
    across = run_in_process("compare", str(out), str(gpu))
    assert across.returncode == 2 and "no row in common" in across.stderr


def replays_before_trial_zero(rank: int, world_size: int) -> tuple[int, int, int, bool]:
    """(replays before the trial, after it, the trial's samples, enqueue_us finite)."""
    from distbench.comm.graph import timed_replays

    ctx = Context(rank, world_size, torch.device("cpu"), "gloo", None, (0, 1))
    count = [0]

    def replay() -> None:
        count[0] += 1

    trial, enqueue_us = timed_replays(ctx, replay, 4, 3)
    before = count[0]
    samples = trial(ctx, replay, 4)
    return before, count[0] - before, len(samples), enqueue_us == enqueue_us


def test_graph_rows_replay_untimed_before_trial_zero(tmp_path: Path) -> None:
    """The first replay of a graph uploads it: WARM_REPLAYS untimed replays come before trial
    0 (their host time, all but the first, gives enqueue_us), then a trial of N replays."""
    from distbench.comm.graph import WARM_REPLAYS

    results = run_on_gloo_ranks(replays_before_trial_zero, 2, tmp_path / "store")
    assert results == [(WARM_REPLAYS, 3, 1, True)] * 2
    assert WARM_REPLAYS >= 2
