"""gather, the primitive added by its file, its facts and a registry line (#28 item 1). The half
that launches or runs for seconds; the in-process half, and the file's whole story:
tests/unit/comm/test_gather.py."""

from __future__ import annotations

import csv
import functools
import os
import runpy
from pathlib import Path

import pytest
import torch

from distbench.primitives.base import CaseRequest, Context
from tests.conftest import run_cli, run_on_gloo_ranks
from tests.paths import INJECT

INJECT = INJECT / "gather_faults"
FAULTS = ("rotate", "swap", "skip", "root")
TINY = ("--backend", "gloo", "--iters", "2", "--warmup", "1", "--trials", "2")


def read_rows(run: Path) -> list[dict[str, str]]:
    with open(run / "results.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def gather_cases(rank: int, world_size: int) -> dict[str, tuple[int, int]]:
    """{dtype/root: (size_bytes, wrong elements of the check after a timed run)} on this rank."""
    from distbench.primitives.registry import PRIMITIVES

    ctx = Context(rank, world_size, torch.device("cpu"), "gloo", None, tuple(range(world_size)))
    found = {}
    for dtype in (torch.float32, torch.int8):
        request = CaseRequest(1024, dtype, root="all")
        for case in PRIMITIVES["gather"].build_cases(ctx, request):
            case.run()
            found[f"{dtype}/{case.labels['root']}"] = (case.size_bytes, case.check())
    return found


def test_gather_checks_every_root_on_a_real_group(tmp_path: Path) -> None:
    ranks = run_on_gloo_ranks(gather_cases, 3, tmp_path / "store")
    for found in ranks:
        assert sorted(found) == [f"{d}/{r}" for d in ("torch.float32", "torch.int8") for r in "012"]
        # 1K at 3 ranks: 256 float32 -> 3 x 85 = 255 elements (1020 B); 1024 int8 -> 1023 B
        assert {size for key, (size, _) in found.items() if "float32" in key} == {1020}
        assert {size for key, (size, _) in found.items() if "int8" in key} == {1023}
        assert [wrong for _, wrong in found.values()] == [0] * 6


@pytest.mark.slow
def test_gather_cli_every_root_checked(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run_cli(
        "gather", *TINY, "--world-sizes", "3", "--sizes", "1K,64K", "--root", "all", "--check",
        "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    rows = read_rows(out)
    assert [(r["root"], r["size_bytes"]) for r in rows] == [
        (root, size) for size in ("1020", "65532") for root in "012"
    ]
    assert {r["primitive"] for r in rows} == {"gather"}
    assert [float(r["busbw_factor"]) for r in rows] == pytest.approx([2 / 3] * 6)
    assert {r["wrong"] for r in rows} == {"0"}


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["rotate"])
def test_gather_check_fails_under_each_fault(
    fault: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the CLI (exit 1, the message, the row's wrong cell): rotate; the other faults
    on forked ranks below, the same wrapper and the same check."""
    marks, out = tmp_path / "marks", tmp_path / "run"
    marks.mkdir()
    path = os.pathsep.join(filter(None, [str(INJECT), os.environ.get("PYTHONPATH")]))
    monkeypatch.setenv("PYTHONPATH", path)
    monkeypatch.setenv("DISTBENCH_TEST_GATHER", fault)
    monkeypatch.setenv("DISTBENCH_TEST_MARKS", str(marks))
    result = run_cli(
        "gather", *TINY, "--world-sizes", "2", "--sizes", "1K", "--root", "1", "--check",
        "--out", str(out),
    )  # fmt: skip
    assert sorted(path.name for path in marks.iterdir()) == ["0", "1"]  # the fault ran on both
    assert result.returncode == 1, result.stdout + result.stderr
    assert "--check found" in result.stderr and "wrong elements in gather" in result.stderr
    [row] = read_rows(out)
    assert int(row["wrong"]) > 0


def checked_under_fault(fault: str, marks: str, rank: int, world_size: int) -> int:
    """A forked rank of a real gloo group with tests/inject/gather_faults installed as a worker's
    sitecustomize installs it; the wrong elements its check of a 1K float32 gather to root 1
    counts after a run (what `gather ... --root 1 --check` sums over ranks into the row)."""
    from distbench.primitives.registry import PRIMITIVES

    os.environ.update(LOCAL_RANK=str(rank), RANK=str(rank), DISTBENCH_TEST_GATHER=fault)
    os.environ["DISTBENCH_TEST_MARKS"] = marks
    runpy.run_path(str(INJECT / "sitecustomize.py"))
    ctx = Context(rank, world_size, torch.device("cpu"), "gloo", None, tuple(range(world_size)))
    [case] = PRIMITIVES["gather"].build_cases(ctx, CaseRequest(1024, torch.float32, root="1"))
    case.run()
    return case.check()


@pytest.mark.parametrize("fault", [f for f in FAULTS if f != "rotate"])
def test_gather_check_counts_wrong_elements_under_each_other_fault(
    fault: str, tmp_path: Path
) -> None:
    """swap, skip and root: the fault ran on both ranks and the check's sum over ranks (the
    row's `wrong`, comm/runner.py) is above 0, which fails the run as rotate does above."""
    marks = tmp_path / "marks"
    marks.mkdir()
    work = functools.partial(checked_under_fault, fault, str(marks))
    wrong = run_on_gloo_ranks(work, 2, tmp_path / "store")
    assert sorted(path.name for path in marks.iterdir()) == ["0", "1"]  # the fault ran on both
    assert sum(wrong) > 0, wrong
