"""The line an interrupted several-node run prints: each node resumes its own directory (node K
> 0: OUT/node<K>), and one started without --node-rank cannot be resumed (resume.py refuses)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from distbench.collectors.schema import MANIFEST_JSON, SCHEMA_VERSION
from distbench.comm.spec import CommSpec
from distbench.launch.rerun import rest_line
from distbench.launch.resume import resume_run
from distbench.parse import UsageError
from distbench.spec import LaunchSpec, RunSpec


def spec_of(run_dir: Path, **launch: object) -> RunSpec:
    base: dict[str, object] = {
        "backend": "gloo", "device": "cpu", "world_sizes": (2,), "run_dir": str(run_dir),
        "run_id": "r", "rdzv_endpoint": "n1:29500", "nproc_per_node": 1,
    }  # fmt: skip
    lspec = LaunchSpec(**{**base, **launch})  # type: ignore[arg-type]
    return RunSpec(launch=lspec, workload=CommSpec(primitives=("all_reduce",), sizes=(1024,)))


def test_one_node_names_its_own_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    line = rest_line(spec_of(tmp_path / "run"), tmp_path / "run")
    assert line == "to measure the rest: distbench allreduce --resume run"


@pytest.mark.parametrize("node_rank", [0, 1])
def test_several_nodes_name_node_0s_directory_and_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, node_rank: int
) -> None:
    monkeypatch.chdir(tmp_path)
    run_dir = tmp_path / "run" / "node1" if node_rank else tmp_path / "run"
    line = rest_line(spec_of(run_dir, nnodes=2, node_rank=node_rank), run_dir)
    assert line == (
        "to measure the rest, on every node at once: node 0 distbench allreduce --resume run, "
        "node K > 0 distbench allreduce --resume 'run/node<K>'"
    )


def test_several_nodes_without_node_rank_cannot_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = spec_of(tmp_path / "run", nnodes=2, node_rank=-1)
    assert "cannot be resumed" in rest_line(spec, tmp_path / "run")
    assert "--node-rank" in rest_line(spec, tmp_path / "run")


def interrupted_c10d_run(tmp_path: Path) -> Path:
    """An interrupted two-node run started without --node-rank (c10d assigned the nodes)."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    spec_of(run_dir, nnodes=2, node_rank=-1).save(run_dir)
    (run_dir / MANIFEST_JSON).write_text(
        json.dumps({"schema_version": SCHEMA_VERSION, "status": "interrupted"})
    )
    return run_dir


def test_resume_refuses_a_several_node_run_started_without_node_rank(tmp_path: Path) -> None:
    run_dir = interrupted_c10d_run(tmp_path)
    with pytest.raises(UsageError, match="started without --node-rank cannot be resumed"):
        resume_run(str(run_dir), "all_reduce")


def test_an_overlap_run_is_resumed_by_overlap_not_by_its_collective(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """overlap's workload names its collectives too: before, its line read `distbench allreduce
    --resume`, which refused it; and the refusal named no command that would work."""
    from distbench.overlap.spec import OverlapSpec

    monkeypatch.chdir(tmp_path)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    launch = spec_of(run_dir).launch
    spec = RunSpec(launch=launch, workload=OverlapSpec(sizes=(1024,), primitives=("all_reduce",)))
    assert rest_line(spec, run_dir) == "to measure the rest: distbench overlap --resume run"
    assert "marks the run completed" in rest_line(spec, run_dir, left=0)
    spec.save(run_dir)
    (run_dir / MANIFEST_JSON).write_text(
        json.dumps({"schema_version": SCHEMA_VERSION, "status": "interrupted"})
    )
    with pytest.raises(UsageError) as refused:
        resume_run("run", "all_reduce")
    assert str(refused.value) == (
        "--resume run: that run was started by `distbench overlap`: resume it with "
        "`distbench overlap --resume run`"
    )


def test_resume_with_a_node_rank_continues_that_nodes_own_directory() -> None:
    """ci/slurm-nightly.sbatch gives every node one command, `--resume OUT ... --node-rank K`:
    node K continues OUT/nodeK (its own spec), not node 0's."""
    from distbench.cli.run import resume_dir
    from distbench.options.launch import LaunchArgs

    assert resume_dir(LaunchArgs(resume="out", node_rank=2)) == str(Path("out") / "node2")
    assert resume_dir(LaunchArgs(resume="out/node2", node_rank=2)) == "out/node2"
    assert resume_dir(LaunchArgs(resume="out", node_rank=0)) == "out"
    assert resume_dir(LaunchArgs(resume="out")) == "out"


def test_an_out_holding_a_c10d_several_node_run_offers_no_resume(tmp_path: Path) -> None:
    from distbench.launch.rerun import held_run_error

    run_dir = interrupted_c10d_run(tmp_path)
    message = str(held_run_error(run_dir))
    assert "started without --node-rank, which cannot be resumed" in message
    assert "--resume" not in message


def test_a_rank_out_of_memory_says_a_resume_meets_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure that is an allocation (torch's CPU allocator here) comes back at the same size:
    the line says so before the resume command; any other failure gets the plain line."""
    from distbench.launch.rerun import failed_rest_line

    monkeypatch.chdir(tmp_path)
    spec = spec_of(tmp_path / "run")
    oom = "world size 2: rank 0 failed: RuntimeError: DefaultCPUAllocator: can't allocate memory"
    manifest = {"launches": [{"failure": None}, {"failure": oom}]}
    line = failed_rest_line(spec, tmp_path / "run", manifest, 3)
    assert line.startswith("a rank ran out of memory") and "smaller --sizes" in line
    assert line.endswith("to measure the rest: distbench allreduce --resume run")
    manifest = {"launches": [{"failure": "world size 2: rank 1 exited with code 9"}]}
    assert failed_rest_line(spec, tmp_path / "run", manifest, 3) == rest_line(
        spec, tmp_path / "run", 3
    )
