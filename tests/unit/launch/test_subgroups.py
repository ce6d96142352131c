"""World-size sweeps: one launch of the largest size, smaller sizes on new_group subgroups of ranks
0..k-1 (real gloo groups), against --separate-launches. Plus the pure launch plan."""

from __future__ import annotations

from distbench.plan import PlannedLaunch, measured_sizes, plan_launches
from distbench.spec import LaunchSpec


def launch(**changes: object) -> LaunchSpec:
    base: dict[str, object] = {
        "backend": "gloo",
        "device": "cpu",
        "world_sizes": (2, 4, 8),
        "run_dir": "/r",
        "run_id": "r",
    }
    return LaunchSpec(**{**base, **changes})  # type: ignore[arg-type]


def test_plan_one_launch_of_the_largest() -> None:
    assert plan_launches(launch(), "comm") == [PlannedLaunch(8, (2, 4, 8))]
    assert measured_sizes(launch(), "comm", 8) == (2, 4, 8)


def test_plan_separate_launches_and_other_kinds() -> None:
    separate = [PlannedLaunch(2, (2,)), PlannedLaunch(4, (4,)), PlannedLaunch(8, (8,))]
    assert plan_launches(launch(separate_launches=True), "comm") == separate
    assert plan_launches(launch(), "ddp") == separate  # runners that ignore ctx.group
    assert measured_sizes(launch(), "ddp", 4) == (4,)


def test_plan_multinode_is_one_launch() -> None:
    spec = launch(nnodes=2, nproc_per_node=4, rdzv_endpoint="h:1")
    assert plan_launches(spec, "comm") == [PlannedLaunch(8, (2, 4, 8))]
    assert plan_launches(launch(nnodes=2, nproc_per_node=4, rdzv_endpoint="h:1", world_sizes=(8,)),
                         "ddp") == [PlannedLaunch(8, (8,))]  # fmt: skip
