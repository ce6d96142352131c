"""`distbench acceptance`: end to end on 2 loopback nodes x 2 ranks with --quick (a healthy
cluster passes; node 1 slowed from the test side, tests/inject/slow_node in its environment only,
fails naming node 1 and not node 0), each reason of the verdict re-judged on the real run's rows
with one input corrupted (a mutation per reason), the verdict logic on numbers, the plan against
the nightly matrices it claims to run, and the refusals (one line, exit 2)."""

from __future__ import annotations

import copy
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from distbench.acceptance.plan import Plan, base_plan, fit_budget
from distbench.acceptance.runner import Acceptance, Stages, run_acceptance
from distbench.acceptance.verdict import judge
from distbench.cli.app import run_cli
from distbench.options.launch import LaunchArgs
from distbench.parse import UsageError, parse_size
from tests.paths import ROOT


@dataclass(frozen=True)
class Ref:
    primitive: str
    world_size: int
    size_bytes: int
    busbw_GBps: float
    backend: str = ""


# -- the verdict on numbers --------------------------------------------------------------------


def standing(rank: int, node: int, outlier: bool, level: str = "rank") -> dict[str, str]:
    return {
        "level": level,
        "rank": str(rank),
        "node": str(node),
        "primitive": "send_recv",
        "size_bytes": "65536",
        "busbw_GBps": "0.5",
        "robust_z": "-9" if outlier else "0.3",
        "outlier": "true" if outlier else "false",
    }


def row(busbw: float, wrong: str = "0", size: int = 1 << 20) -> dict[str, str]:
    return {
        "primitive": "all_reduce",
        "world_size": "8",
        "size_bytes": str(size),
        "dtype": "float32",
        "busbw_GBps": str(busbw),
        "wrong": wrong,
        "backend": "nccl",
    }


HOSTS = {0: "h0", 1: "h1", 2: "h2", 3: "h3"}
FACTS = {
    str(n): {"host": h, "nccl": "2.21", "gpus": [{"index": 0, "uuid": f"GPU-{n}"}]}
    for n, h in HOSTS.items()
}
HEALTHY = [standing(n, n, False, "node") for n in HOSTS]
REF = [Ref("all_reduce", 8, 1 << 20, 10.0, "nccl")]


def fails(verdict_nodes: tuple) -> dict[int, list[str]]:
    return {n.node: list(n.reasons) for n in verdict_nodes if not n.passed}


def test_healthy_numbers_pass_and_say_what_was_not_seen() -> None:
    verdict = judge(HOSTS, HEALTHY, [row(9.0)], REF, 0.8, FACTS)
    assert verdict.passed and fails(verdict.nodes) == {}
    assert "node 2 (h2): PASS" in [n.line() for n in verdict.nodes]
    assert any("more than half of the nodes" in s for s in verdict.not_seen)
    without = judge(HOSTS, HEALTHY, [row(9.0)], None, 0.8, FACTS)
    assert any("no --reference file" in s for s in without.not_seen)


def test_pairs_outlier_fails_its_node_only() -> None:
    slow = [standing(n, n, n == 2, "node") for n in HOSTS]
    found = fails(judge(HOSTS, slow, [row(9.0)], REF, 0.8, FACTS).nodes)
    assert list(found) == [2] and found[2][0].startswith("pairs: the node is an outlier")
    ranks = [standing(r, r // 2, r == 5) for r in range(8)]
    found = fails(judge(HOSTS, ranks, [], None, 0.8, FACTS).nodes)
    assert list(found) == [2] and "rank 5 is an outlier" in found[2][0]


def test_busbw_below_the_share_of_the_reference_fails_every_node() -> None:
    assert judge(HOSTS, HEALTHY, [row(8.0)], REF, 0.8, FACTS).passed  # exactly 80 %: passes
    found = fails(judge(HOSTS, HEALTHY, [row(7.9)], REF, 0.8, FACTS).nodes)
    assert list(found) == [0, 1, 2, 3]
    assert "79% of the expected 10 GB/s (below 80%" in found[0][0]
    tiny = fails(judge(HOSTS, HEALTHY, [row(0.0283)], REF, 0.8, FACTS).nodes)
    assert "busbw 0.0283 GB/s is 0.28% of the expected" in tiny[0][0]  # not "0%"
    assert judge(HOSTS, HEALTHY, [row(7.9)], REF, 0.7, FACTS).passed  # another share
    other_size = [row(1.0, size=1 << 10)]  # no reference covers it
    verdict = judge(HOSTS, HEALTHY, other_size, REF, 0.8, FACTS)
    assert verdict.passed and any("no row of the sweep" in s for s in verdict.not_seen)
    smaller_world = [dict(row(1.0), world_size="4"), row(9.0)]  # only the full world is judged
    assert judge(HOSTS, HEALTHY, smaller_world, REF, 0.8, FACTS).passed


def test_wrong_results_fail_every_node() -> None:
    assert judge(HOSTS, HEALTHY, [row(9.0, wrong="-1")], REF, 0.8, FACTS).passed  # not checked
    found = fails(judge(HOSTS, HEALTHY, [row(9.0, wrong="3")], REF, 0.8, FACTS).nodes)
    assert list(found) == [0, 1, 2, 3] and "3 wrong elements" in found[3][0]


def test_a_fact_that_differs_fails_the_odd_node() -> None:
    odd = copy.deepcopy(FACTS)
    odd["3"]["nccl"] = "2.27"
    found = fails(judge(HOSTS, HEALTHY, [row(9.0)], REF, 0.8, odd).nodes)
    assert found == {3: ["facts: nccl is 2.27 where 3 of 4 nodes have 2.21"]}
    two = {k: v for k, v in odd.items() if k in ("2", "3")}
    found = fails(judge({2: "h2", 3: "h3"}, [], [], None, 0.8, two).nodes)
    assert list(found) == [2, 3] and "no value has a majority" in found[2][0]
    # GPU UUIDs, host names and launchers' node ranks differ by nature: never a reason
    ranked = copy.deepcopy(FACTS)
    for node, facts in ranked.items():
        facts["scheduler"] = {"name": "skypilot", "node_rank": node, "node_id": node}
    assert judge(HOSTS, HEALTHY, [row(9.0)], REF, 0.8, ranked).passed


# -- the plan -----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["gloo", "nccl"])
def test_the_full_plan_is_the_nightly_matrix(backend: str) -> None:
    name = {"gloo": "cpu", "nccl": "gpu"}[backend]
    nightly = tomllib.loads((ROOT / "ci" / f"sweep-nightly-{name}.toml").read_text())
    if "min_size" in nightly:
        low, high = parse_size(nightly.pop("min_size")), parse_size(nightly.pop("max_size"))
        factor = nightly.pop("factor")
        ladder = [low * factor**k for k in range(20) if low * factor**k <= high]
        nightly["sizes"] = ladder
    nightly.pop("world_sizes", None)  # acceptance runs the full world
    assert nightly.pop("backends") == [backend]
    plan = base_plan(backend, 8, 2, quick=False).matrix
    plan_sizes = [parse_size(s) for s in plan["sizes"]]
    assert plan_sizes == [parse_size(str(s)) for s in nightly.pop("sizes")]
    assert {k: v for k, v in plan.items() if k != "sizes"} == nightly


def test_quick_plan_and_budget_cuts() -> None:
    quick = base_plan("gloo", 4, 2, quick=True)
    assert quick.matrix["sizes"] == ["1K", "64K"] and quick.matrix["trials"] == 3
    assert "pairs" not in quick.matrix and quick.pairs_level == "rank"
    assert base_plan("nccl", 24, 3, quick=False).pairs_level == "node"
    full = base_plan("nccl", 8, 1, quick=False)
    assert fit_budget(full, 1, None) == full
    cut = fit_budget(full, 1, 3)
    assert cut.estimate_s(1) <= 180 < full.estimate_s(1)
    assert cut.cuts[:2] == ("trials 10 -> 5", "dtypes: bfloat16 only")
    assert cut.matrix["sizes"][-1] == "1G" or any("dropped" in c for c in cut.cuts)
    with pytest.raises(UsageError, match="cannot hold the smallest acceptance plan"):
        fit_budget(full, 1, 0.5)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--world-sizes", "2"], "--world-sizes does not apply to acceptance"),
        (["--resume", "x"], "--resume does not apply to acceptance: an acceptance is not resumed"),
        (["--env", "A=1"], "--env does not apply to acceptance: it judges the environment"),
        (["--budget", "0"], "--budget '0' is not a positive time for the whole run"),
        (["--budget", "10q"], "minutes (30, 30m), or 90s, 1h"),
        (["--budget", "0.2"], "cannot hold the smallest acceptance plan"),
        (["--reference-share", "1.5"], "--reference-share '1.5' is not a share"),
        (["--reference", "no-such.toml"], "--reference no-such.toml: cannot read it"),
        (["--nnodes", "2", "--rdzv-endpoint", "127.0.0.1:1"], "needs fixed node ranks"),
    ],
)
def test_refusals_are_one_line_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["acceptance", "--backend", "gloo", "--dry-run", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


# -- the runner's exit codes, its launches replaced (the seam is Stages, not torch) -------------


def fake_stages(pairs_code: int, sweep_code: int = 0) -> Stages:
    """Stages whose launches write nothing but a results.csv (the writer's mark) and exit so."""

    def pairs(plan: Plan, launch: LaunchArgs, out: Path) -> tuple[int, Path]:
        run = out / "pairs"
        run.mkdir(parents=True)
        (run / "results.csv").write_text("run_id\n")
        return pairs_code, run

    def sweep(path: Path, launch: LaunchArgs, out: Path) -> tuple[int, Path]:
        (out / "sweep").mkdir()
        return sweep_code, out / "sweep"

    return Stages(check_matrix=lambda path, resolved: None, pairs=pairs, sweep=sweep)


CHOICE = Acceptance(budget_min=None, quick=True, reference=None, share=0.8)


def test_a_failed_launch_is_exit_3_with_no_verdict(tmp_path: Path) -> None:
    launch = LaunchArgs(backend="gloo", out=str(tmp_path / "acc"), quiet=True)
    assert run_acceptance(CHOICE, launch, fake_stages(1)) == 3
    body = json.loads((tmp_path / "acc" / "acceptance.json").read_text())
    assert body["status"] == "pairs failed" and body["exit_code"] == 3 and not body["passed"]
    assert "nodes" not in body  # no verdict
    again = LaunchArgs(backend="gloo", out=str(tmp_path / "acc2"), quiet=True)
    assert run_acceptance(CHOICE, again, fake_stages(0, 1)) == 3  # the sweep's failure too
    body = json.loads((tmp_path / "acc2" / "acceptance.json").read_text())
    assert body["status"] == "sweep failed"
    with pytest.raises(UsageError, match="holds an acceptance verdict"):
        run_acceptance(CHOICE, launch, fake_stages(0))  # no run overwrites another


def test_an_interrupted_launch_is_exit_130(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    launch = LaunchArgs(backend="gloo", out=str(tmp_path / "acc"), quiet=True)
    assert run_acceptance(CHOICE, launch, fake_stages(130)) == 130
    assert not (tmp_path / "acc" / "acceptance.json").exists()
    last = capsys.readouterr().out.splitlines()[-1]  # acceptance's own word comes last
    assert last.startswith("acceptance: interrupted: no verdict;") and "new --out" in last


def test_a_failed_launch_says_error_not_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """FAIL is a node's verdict (exit 1); a run that broke is exit 3 and says ERROR."""
    launch = LaunchArgs(backend="gloo", out=str(tmp_path / "acc"), quiet=True)
    assert run_acceptance(CHOICE, launch, fake_stages(1)) == 3
    out = capsys.readouterr().out
    assert "acceptance: ERROR: the pairs run failed (its exit code 1): no verdict (exit 3)" in out
    assert "FAIL" not in out


def test_out_must_be_a_new_or_acceptance_directory(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    for out, message in (
        (tmp_path / "afile", "is a file: give a new directory"),
        (tmp_path / "afile" / "x", "cannot write the acceptance directory"),
    ):
        launch = LaunchArgs(backend="gloo", out=str(out), quiet=True)
        with pytest.raises(UsageError, match=message):
            run_acceptance(CHOICE, launch, fake_stages(0))
    other = tmp_path / "allreduce-run"
    other.mkdir()
    (other / "results.csv").write_text("run_id\n")
    launch = LaunchArgs(backend="gloo", out=str(other), quiet=True)
    with pytest.raises(UsageError, match=r"holds another run \(results\.csv\)"):
        run_acceptance(CHOICE, launch, fake_stages(0))
    assert sorted(p.name for p in other.iterdir()) == ["results.csv"]  # nothing written


def test_the_budget_takes_a_unit_as_the_primitives_budget_does() -> None:
    """A new user's `--budget 30m` was refused ('not a positive number of minutes'), where the
    primitives' --budget takes 10s; a bare number stays minutes here."""
    from distbench.cli.acceptance import parse_budget

    assert [parse_budget(v) for v in ("30", "30m", "30min", "90s", "1h")] == [30, 30, 30, 1.5, 60]
