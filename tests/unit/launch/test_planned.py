"""What a launch has left (launch/planned.py), with a pairs run whose confirmation wrote rows
past its plan: every count against the plan counts planned rows only, and a size whose standings
ranks.csv lacks is work left although its planned rows are all there."""

from __future__ import annotations

from pathlib import Path

from distbench.launch.planned import launch_left, planned_of
from distbench.pairs.spec import PairsSpec, unranked
from distbench.spec import LaunchSpec, RunSpec

RANKS_HEADER = "run_id,label,level,rank,host,node,primitive,mode,size_bytes,env\n"


def pairs_run(run_dir: Path) -> RunSpec:
    """4 ranks, 2 sizes: 6 pairs a size, plan 12 (ws4/i0-i11); confirmations from ws4/i12."""
    run_dir.mkdir(parents=True, exist_ok=True)
    launch = LaunchSpec(backend="gloo", device="cpu", world_sizes=(4,), run_dir=str(run_dir),
                        run_id="r")  # fmt: skip
    return RunSpec(launch=launch, workload=PairsSpec(sizes=(1024, 65536)))


def ids(*indices: int) -> list[str]:
    return [f"ws4/i{i}" for i in indices]


def test_rows_past_the_plan_never_stand_for_planned_ones(tmp_path: Path) -> None:
    """A rank died in size 2's last round after size 1's confirmation wrote 3 rows: 13 rows, 12
    planned, yet two planned rows are missing, so the launch has work left (it was taken for
    finished, the run marked completed and refused a resume)."""
    spec = pairs_run(tmp_path / "run")
    written = ids(0, 1, 2, 3, 4, 5, 12, 13, 14, 6, 7, 8, 9)
    assert len(written) == 13
    assert launch_left(spec, 4, written) == 2 + 1  # i10, i11, and size 2's standings
    planned = planned_of([spec])
    assert sum(map(planned, written)) == 10 and not planned("ws4/i12")


def test_a_size_without_standings_is_left(tmp_path: Path) -> None:
    """Every planned row there, size 1 ranked, size 2 not (stopped during its confirmation):
    one size left; with both ranked, nothing."""
    spec = pairs_run(tmp_path / "run")
    every = ids(*range(12), 12, 13, 14)
    ranks = tmp_path / "run" / "ranks.csv"
    rows = [f"r,,rank,{u},h,0,send_recv,throughput,1024,\n" for u in range(4)]
    ranks.write_text(RANKS_HEADER + "".join(rows))
    assert unranked(spec, 4, every) == 1
    assert launch_left(spec, 4, every) == 1
    rows += [f"r,,rank,{u},h,0,send_recv,throughput,65536,\n" for u in range(4)]
    ranks.write_text(RANKS_HEADER + "".join(rows))
    assert launch_left(spec, 4, every) == 0
    assert unranked(spec, 4, ids(*range(6))) == 0
    ranks.unlink()  # a fresh run: nothing measured, nothing ranked, nothing left beyond rows
    assert launch_left(spec, 4, ()) == 12


def test_a_failed_launch_with_work_left_fails_the_run(tmp_path: Path) -> None:
    """launch_problem decides on what is left, not on how many rows the launch wrote."""
    from distbench.launch.run import launch_problem
    from distbench.launch.torchrun import LaunchResult

    spec = pairs_run(tmp_path / "run")
    rows = [{"measurement": m, "wrong": "-1"} for m in ids(0, 1, 2, 3, 4, 5, 12, 13, 14, 6, 7)]
    rows += [{"measurement": m, "wrong": "-1"} for m in ids(8, 9)]
    died = LaunchResult(4, 1, len(rows), "rank 2 exited with code 1 (measuring ws4/i10)")
    problem = launch_problem(
        spec, rows, died, 12, launch_left(spec, 4, [r["measurement"] for r in rows])
    )
    assert problem is not None and problem[0] == "failed"
    assert launch_problem(spec, rows, died, 12, 0) is None  # nothing left: it failed leaving


def test_standings_are_known_by_env_and_the_measured_size(tmp_path: Path) -> None:
    """--env runs write every combination's standings to one ranks.csv: another combination's
    standings of the same size do not finish this one's; and a size is known by the bytes it
    measured (1001 asked of float32 measures 1000)."""
    from dataclasses import replace

    spec = pairs_run(tmp_path / "run")
    spec = replace(spec, launch=replace(spec.launch, env=("NCCL_ALGO=Ring",)),
                   workload=replace(spec.workload, sizes=(1001, 65536), tag="env1/"))  # fmt: skip
    every = [f"env1/ws4/i{k}" for k in range(12)]
    ranks = tmp_path / "run" / "ranks.csv"
    other = [f"r,,rank,{u},h,0,send_recv,throughput,1000,NCCL_ALGO=Tree\n" for u in range(4)]
    ranks.write_text(RANKS_HEADER + "".join(other))
    assert unranked(spec, 4, every) == 2  # the other combination's standings finish nothing
    mine = [f"r,,rank,{u},h,0,send_recv,throughput,1000,NCCL_ALGO=Ring\n" for u in range(4)]
    ranks.write_text(RANKS_HEADER + "".join(other + mine))
    assert unranked(spec, 4, every) == 1  # 1001 B measured as 1000: ranked; 64K: not yet
