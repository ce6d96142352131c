"""Mutation tests: `--check` reports wrong > 0 whenever the real collective's result is
corrupted (tests/mutation/corrupt.py), for every primitive, op and mutation (send/recv: every
pattern; all_gather and reduce_scatter in and out of place; alltoallv in every split form), on
real gloo groups of 2, 3, 4 and 8 ranks, and 0 when nothing is corrupted. One process
group per world size runs every case (tests/mutation/driver.py). Then once through the CLI:
a rotated all_reduce makes `distbench allreduce --check` report the wrong elements and exit 1."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from distbench.primitives.registry import PRIMITIVES
from tests.conftest import run_cli
from tests.mutation.corrupt import BASIC, REDUCING
from tests.mutation.driver import OPS, PLACED
from tests.paths import ROOT

pytestmark = pytest.mark.slow


def launch_driver(world_size: int, tmp_path: Path) -> dict[str, int]:
    """One gloo group of `world_size` ranks runs every case; {case: wrong summed over ranks}."""
    out = tmp_path / "wrong.json"
    result = subprocess.run(
        [sys.executable, "-m", "tests.mutation.driver", str(world_size), str(out)],
        cwd=ROOT,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    return json.loads(out.read_text())


@pytest.mark.parametrize("world_size", [2, 3, 4, 8])
def test_check_catches_every_mutation(world_size: int, tmp_path: Path) -> None:
    results = launch_driver(world_size, tmp_path)
    clean = {case: wrong for case, wrong in results.items() if case.endswith("/none")}
    mutated = {case: wrong for case, wrong in results.items() if not case.endswith("/none")}
    assert {case: wrong for case, wrong in clean.items() if wrong != 0} == {}
    assert [case for case, wrong in mutated.items() if wrong <= 0] == []
    # What was covered: every primitive, every op of the reducing ones, every mutation.
    primitives = {case.split("/")[0] for case in results}
    assert primitives == set(PRIMITIVES)
    for primitive in REDUCING:
        ops = {case.split("/")[2] for case in results if case.startswith(f"{primitive}/")}
        assert ops == set(OPS), primitive
    kinds = {case.rsplit("/", 1)[1] for case in mutated}
    assert kinds == {*BASIC, "lose1", "other", *(f"other:{op}" for op in OPS)}
    assert len(mutated) > 300
    # send/recv: every pattern (multipair, i with i + n/2, at even world sizes only)
    sendrecv = [case for case in results if case.startswith("send_recv/")]
    patterns = {case.split("pattern=")[1].split("/")[0] for case in sendrecv}
    wanted = {"pingpong", "window=2", "bidir-window=2", "ring"}
    if world_size % 2 == 0:
        wanted |= {"multipair-window=2", "multipair-bidir-window=2"}
    assert {p.split(",")[0] for p in patterns} == wanted
    # --placement: all_gather and reduce_scatter checked in place and out of place, every mutation
    for primitive in PLACED:
        cases = [case for case in mutated if case.startswith(f"{primitive}/")]
        for placement in ("in", "out"):
            placed = {c.rsplit("/", 1)[1] for c in cases if f"placement={placement}" in c}
            lose = [] if (primitive, placement) == ("reduce_scatter", "in") else ["lose1"]
            assert {*BASIC, *lose} <= placed, (primitive, placement)
    # alltoallv: every split form (equal, zipf, hot, MoE routing), every mutation of a data mover
    alltoallv = [case for case in mutated if case.startswith("all_to_allv/")]
    forms = {case.split("pattern=")[1].split("/")[0].split(":")[0] for case in alltoallv}
    assert forms == {"uniform", "zipf", "hot", "moe"}
    assert {case.rsplit("/", 1)[1] for case in alltoallv} == {*BASIC, "lose1", "other"}


SITECUSTOMIZE = '''
"""Injected by tests/integration/comm/test_mutation.py: every worker's all_reduce rotates its
result by 8."""
import os

if "LOCAL_RANK" in os.environ:  # a worker, not the CLI or torchrun's agent
    import torch.distributed as dist

    _real_all_reduce = dist.all_reduce

    def _rotated(tensor, *args, **kwargs):
        work = _real_all_reduce(tensor, *args, **kwargs)
        tensor.copy_(tensor.roll(8))  # by 8: the old period-8 data passed this
        return work

    dist.all_reduce = _rotated
    open(os.path.join(os.environ["MUTATION_MARKS"], os.environ["RANK"]), "w").close()
'''


def test_cli_check_fails_when_all_reduce_is_rotated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook, marks, out = tmp_path / "hook", tmp_path / "marks", tmp_path / "run"
    hook.mkdir()
    marks.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(hook), os.environ.get("PYTHONPATH")]))
    )
    monkeypatch.setenv("MUTATION_MARKS", str(marks))
    tiny = ("--iters", "2", "--warmup", "1", "--trials", "1")
    result = run_cli(
        "allreduce", "--backend", "gloo", "--world-sizes", "2", "--sizes", "1K", *tiny,
        "--check", "--out", str(out),
    )  # fmt: skip
    assert sorted(path.name for path in marks.iterdir()) == ["0", "1"]  # the hook ran on both
    assert result.returncode == 1, result.stdout + result.stderr
    assert "--check found" in result.stderr and "wrong elements in all_reduce" in result.stderr
    with open(out / "results.csv", newline="") as handle:
        [row] = list(csv.DictReader(handle))
    assert int(row["wrong"]) > 0
