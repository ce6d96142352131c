"""`distbench acceptance`. The half that launches or runs for seconds; the in-process half, and the
file's whole story: tests/unit/acceptance/test_acceptance.py."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from distbench.acceptance.verdict import judge
from distbench.collectors.manifest import read_manifest
from distbench.collectors.sink import read_rows
from tests.conftest import free_port
from tests.paths import ROOT
from tests.unit.acceptance.test_acceptance import Ref

SLOW_NODE = ROOT / "tests" / "inject" / "slow_node"
DELAY_S = "0.002"
"""Per send/recv of node 1's ranks: its pairs ran 9x slower than the healthy pair (64K,
window 64) on the loaded 2-core box."""


def run_two_nodes(tmp: Path, slow_node1: bool, *extra: str) -> list[subprocess.CompletedProcess]:
    """`distbench acceptance --quick` as node 0 and node 1 of one loopback cluster."""
    endpoint = f"127.0.0.1:{free_port()}"
    common = [sys.executable, "-m", "distbench", "acceptance", "--backend", "gloo", "--quick"]
    common += ["--nnodes", "2", "--nproc-per-node", "2", "--rdzv-endpoint", endpoint]
    common += ["--quiet", "--timeout", "120", *extra]
    procs = []
    for node in (0, 1):
        env = dict(os.environ)
        if node == 1 and slow_node1:
            path = [str(SLOW_NODE), env.get("PYTHONPATH")]
            env["PYTHONPATH"] = os.pathsep.join(p for p in path if p)
            env["SLOW_NODE_DELAY_S"] = DELAY_S
        args = [*common, "--node-rank", str(node), "--out", str(tmp / f"n{node}")]
        procs.append(
            subprocess.Popen(
                args, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
        )
    done = []
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, ""))
    return done


@pytest.mark.slow
def test_healthy_cluster_passes_and_each_reason_bites_on_its_rows(tmp_path: Path) -> None:
    expected = tmp_path / "expected.toml"
    expected.write_text(
        '[[reference]]\nprimitive = "all_reduce"\nworld_size = 4\nsize = "64K"\n'
        "busbw_GBps = 0.000001\n"
    )
    node0, node1 = run_two_nodes(tmp_path, False, "--reference", str(expected))
    assert (node0.returncode, node1.returncode) == (0, 0), node0.stdout + node1.stdout
    assert "acceptance: node 0 (" in node0.stdout and "): PASS" in node0.stdout
    assert "acceptance: node 1 (" in node0.stdout
    assert "acceptance: PASS; verdict:" in node0.stdout
    assert "the verdict is given by node 0" in node1.stdout
    out = tmp_path / "n0"
    verdict = json.loads((out / "acceptance.json").read_text())
    assert verdict["passed"] and verdict["exit_code"] == 0
    assert [n["passed"] for n in verdict["nodes"]] == [True, True]
    assert any("1 rows covered" in c for c in verdict["checked"])  # the 64K all_reduce row
    assert (out / verdict["runs"]["report"]).is_file()
    report = (out / "report" / "report.md").read_text()
    assert "What differs" in report
    assert "## Acceptance verdict" in report and "PASS. Checked: pairs" in report

    # Each reason re-judged on this run's own rows, one input corrupted at a time.
    manifest = read_manifest(out / "sweep")
    assert manifest is not None
    standings = read_rows(out / "pairs" / "ranks.csv")
    rows = read_rows(out / "sweep" / "results.csv")
    hosts = {0: "a", 1: "b"}
    nodes = manifest["nodes"]
    ar = next(r for r in rows if r["primitive"] == "all_reduce" and r["size_bytes"] == "65536")
    measured = float(ar["busbw_GBps"])

    def failed(verdict_nodes: tuple) -> list[int]:
        return [n.node for n in verdict_nodes if not n.passed]

    clean = judge(hosts, standings, rows, [Ref("all_reduce", 4, 65536, measured)], 0.8, nodes)
    assert failed(clean.nodes) == []
    # reference: the same row against an expectation 2x its busbw
    high = [Ref("all_reduce", 4, 65536, 2 * measured)]
    judged = judge(hosts, standings, rows, high, 0.8, nodes)
    assert failed(judged.nodes) == [0, 1]
    assert "reference: all_reduce 64K float32 busbw" in judged.nodes[0].reasons[0]
    # pairs: rank 3 (node 1) made an outlier
    slow = [dict(r, outlier="true") if r["rank"] == "3" else r for r in standings]
    assert failed(judge(hosts, slow, rows, None, 0.8, nodes).nodes) == [1]
    # wrong results: one row's wrong elements
    wrong = [dict(r, wrong="7") if r is ar else r for r in rows]
    judged = judge(hosts, standings, wrong, None, 0.8, nodes)
    assert failed(judged.nodes) == [0, 1] and "7 wrong elements" in judged.nodes[1].reasons[0]
    # facts: node 1 with another torch environment variable
    other = copy.deepcopy(nodes)
    other["1"].setdefault("env", {})["NCCL_PROTO"] = "Simple"
    judged = judge(hosts, standings, rows, None, 0.8, other)
    assert failed(judged.nodes) == [0, 1]  # two nodes: which one is odd cannot be told
    assert "facts: env.NCCL_PROTO is Simple" in judged.nodes[1].reasons[0]


@pytest.mark.slow
def test_a_slowed_node_fails_by_name(tmp_path: Path) -> None:
    node0, node1 = run_two_nodes(tmp_path, True)
    assert node0.returncode == 1, node0.stdout
    assert node1.returncode == 0, node1.stdout  # it ran its part; node 0 judges
    lines = [line for line in node0.stdout.splitlines() if line.startswith("acceptance: node")]
    assert len(lines) == 2, node0.stdout
    assert lines[0].startswith("acceptance: node 0 (") and lines[0].endswith("): PASS")
    assert lines[1].startswith("acceptance: node 1 (") and "FAIL: pairs: rank" in lines[1]
    assert "acceptance: FAIL (1 of 2 nodes)" in node0.stdout
    verdict = json.loads((tmp_path / "n0" / "acceptance.json").read_text())
    assert verdict["exit_code"] == 1 and not verdict["passed"]
    assert [n["passed"] for n in verdict["nodes"]] == [True, False]
    named = [r for r in verdict["nodes"][1]["reasons"] if r.startswith("pairs: rank")]
    assert {r.split()[2] for r in named} <= {"2", "3"} and named  # node 1's ranks, only them
    report = (tmp_path / "n0" / "report" / "report.md").read_text()
    assert "FAIL (1 of 2 nodes). Checked:" in report  # the verdict opens the report too
    html = (tmp_path / "n0" / "report" / "report.html").read_text()
    assert html.index("Acceptance verdict") < html.index("What ran")
