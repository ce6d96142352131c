"""ci/gpu-smoke.sh's plan and steps, checked where no GPU is (#30): every step's command line is
accepted by the CLI of a (probed-as) GPU node, the refusals are refused in one line, the plan of
1 and 8 GPUs fits its cap, --only picks steps, every step covers rows of docs/verified-on.md, and
summary.tsv fills that table. The steps themselves run on a GPU node (ci/gpu-smoke.sh)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from distbench.cli.app import run_cli as run_in_process
from distbench.options.launch import Machine
from tests.conftest import usage_error_line
from tests.paths import ROOT

sys.path.insert(0, str(ROOT / "ci"))

from gpu_smoke import CAP_MANY_S, CAP_S, plan, select
from gpu_smoke_report import fill, write_summary
from gpu_smoke_steps import steps


def gpu_node(monkeypatch: pytest.MonkeyPatch, gpus: int) -> None:
    monkeypatch.setattr(Machine, "probe", staticmethod(lambda: Machine(cuda_gpus=gpus, nccl=True)))


@pytest.mark.parametrize("gpus", [1, 2, 8])
def test_every_step_command_is_accepted_on_a_gpu_node(
    gpus: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gpu_node(monkeypatch, gpus)
    for step in steps(gpus):
        if step.min_gpus > gpus:
            continue
        for command in step.commands:
            if command[0] == "pytest":
                assert all((ROOT / f).is_file() for f in command if f.startswith("tests/"))
            elif command[0] == "pairs":
                continue  # `pairs` ignores --dry-run: it would launch (reported, not ours)
            elif step.expect_exit == 2:
                line = usage_error_line([*command, "--dry-run"], capsys)
                assert "distbench: error: " in line
            else:
                code = run_in_process([*command, "--dry-run"])
                assert code == 0, (step.name, capsys.readouterr().err)


@pytest.mark.parametrize(("gpus", "cap"), [(1, CAP_S[1]), (8, CAP_MANY_S)])
def test_the_plan_fits_its_cap(gpus: int, cap: float) -> None:
    lines = plan(select(gpus, ""), gpus, cap, 15.0)
    assert not [line for line in lines if "no time" in line], "\n".join(lines)
    total = float(lines[-1].split()[2])
    assert total <= cap
    if gpus == 1:  # the 2-GPU steps are named, not silently dropped
        assert sum("skipped: needs 2 GPUs" in line for line in lines) == 5


def test_a_step_on_request_runs_only_when_named() -> None:
    """pytest-gpu-examples (the manual's gpu examples, about 3 minutes on one H200) is left out
    of a whole smoke, which keeps its cap, and runs when --only names it, alone or with others."""
    everything = {s.name for s in steps(1)}
    assert "pytest-gpu-examples" in everything
    assert "pytest-gpu-examples" not in {s.name for s in select(1, "")}
    assert {s.name for s in select(1, "")} == everything - {"pytest-gpu-examples"}
    picked = [s.name for s in select(1, "refusals,pytest-gpu-examples")]
    assert picked == ["refusals", "pytest-gpu-examples"]


def test_every_step_covers_rows_of_the_verified_on_table() -> None:
    doc = (ROOT / "docs" / "verified-on.md").read_text()
    features = {line.split(" | ")[0].removeprefix("| ") for line in doc.splitlines()}
    for step in steps(8):
        assert step.covers and set(step.covers) <= features, (step.name, step.covers)


def test_summary_fills_the_gpu_column(tmp_path: Path) -> None:
    doc = tmp_path / "verified-on.md"
    doc.write_text(
        "| feature | CPU | GPU |\n| --- | --- | --- |\n"
        "| `all_reduce` | tests | never run |\n| `pipeline` | tests | never run |\n"
        "| gloo on CUDA tensors | tests | never run |\n"
    )
    env = {"date": "2026-12-02", "gpu": "NVIDIA H200 x1", "driver": "580.159.04",
           "torch": "2.11.0+cu130", "cuda": "13.0", "nccl": "2.28.9"}  # fmt: skip
    results: list[tuple[object, ...]] = [
        ("collectives-nccl", "passed", "0", 21, 24, "`all_reduce`; `sweep`"),
        ("gloo-cuda", "failed", "1", 9, 20, "gloo on CUDA tensors"),
        ("pipeline-nccl", "skipped: needs 2 GPUs", "-", 0, 22, "`pipeline`"),
    ]
    write_summary(tmp_path / "summary.tsv", results, env)
    assert fill(doc, tmp_path / "summary.tsv") == 2
    text = doc.read_text()
    assert (
        "| `all_reduce` | tests | 2026-12-02, NVIDIA H200 x1, driver 580.159.04, torch "
        "2.11.0+cu130, NCCL 2.28.9 (`collectives-nccl`) |" in text
    )
    assert "| gloo on CUDA tensors | tests | failed on 2026-12-02" in text
    assert "| `pipeline` | tests | never run |" in text  # a skipped step verifies nothing
