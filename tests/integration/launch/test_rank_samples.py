"""--rank-samples (#27 §1): samples.csv keeps the rank -1 rows only; with `node` each node's first
rank writes its node's per-rank samples as one Parquet file (tensors point to point inside the
node, no object gather); the report shows the per-rank spread from them, and compare and history
read the run. A real 4-rank gloo run on 2 loopback "nodes" (static rendezvous, one shared --out),
whose Parquet files recompute samples.csv's rank -1 samples exactly (max over ranks)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest

from distbench.cli.app import run_cli
from distbench.collectors.rank_samples import find_rank_sample_files, read_rank_samples
from distbench.reports.load import read_samples
from distbench.spec import measurement_index
from tests.conftest import TwoNodes


@pytest.fixture
def two_nodes(two_nodes_2x2: TwoNodes) -> Path:
    """The session's 2-node run (tests/conftest.py: 2 nodes x 2 ranks on loopback into one
    --out, world sizes 2 (node 0) and 4 (both), --rank-samples node)."""
    return two_nodes_2x2.out


@pytest.mark.slow
def test_one_parquet_file_per_node_and_samples_csv_keeps_rank_minus_one(two_nodes: Path) -> None:
    files = [str(p.relative_to(two_nodes)) for p in find_rank_sample_files(two_nodes)]
    assert files == [
        "node1/rank-samples/ws4-node1.parquet",
        "rank-samples/ws2-node0.parquet",
        "rank-samples/ws4-node0.parquet",
    ]
    samples = pd.read_csv(two_nodes / "samples.csv")
    assert set(samples["rank"]) == {-1}


@pytest.mark.slow
def test_the_parquet_files_recompute_the_rank_minus_one_samples(two_nodes: Path) -> None:
    """Max over ranks of the per-rank samples, per (measurement, trial, iter), is exactly
    samples.csv's rank -1 sample: every rank's samples are there, each under its own rank."""
    per_rank = read_rank_samples(two_nodes)
    per_rank["measurement"] = per_rank["measurement"].astype(str)
    ranks = per_rank.groupby("measurement")["rank"].unique().map(sorted)
    assert {m: list(r) for m, r in ranks.items() if m.startswith("ws2/")} == {
        "ws2/i0": [0, 1],
        "ws2/i1": [0, 1],
    }
    assert all(list(r) == [0, 1, 2, 3] for m, r in ranks.items() if m.startswith("ws4/"))
    keys = ["measurement", "trial", "iter"]
    recomputed = per_rank.groupby(keys)["time_us"].max().reset_index()
    written = read_samples(two_nodes)
    assert written is not None and len(written) == len(recomputed) == 4 * 3
    joined = written.merge(recomputed, on=keys, suffixes=("", "_max"))
    assert len(joined) == len(written)
    assert (joined["time_us"] == joined["time_us_max"]).all()


@pytest.mark.slow
def test_report_compare_and_history_read_it(two_nodes: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert run_cli(["report", str(two_nodes), "--out", str(out)]) == 0
    text = (out / "report.md").read_text()
    spread = text.split("## Per-rank spread", 1)[1]
    assert "| all_reduce | throughput | 16K | 4 |" in spread
    assert run_cli(["compare", str(two_nodes), str(two_nodes)]) == 0
    nights = tmp_path / "nights"
    for night in ("nightly-20260101", "nightly-20260102"):
        (nights / night).mkdir(parents=True)
        run = nights / night / "run"
        subprocess.run(["cp", "-r", str(two_nodes), str(run)], check=True)
    code = run_cli(
        ["history", "--glob", str(nights / "nightly-*"), "--out", str(tmp_path / "history")]
    )
    assert code in (0, 1)
    assert (tmp_path / "history").is_dir()


@pytest.mark.slow
def test_pairs_keep_each_ranks_samples_under_its_own_pair(tmp_path: Path) -> None:
    """`distbench pairs` at 4 ranks (2 pairs a round) with --rank-samples node: the node's
    first rank names every member's samples by the launch's measurement ids (ranks measure
    different pairs), samples.csv keeps the rank -1 rows, and their max over the pair's two
    ranks is exactly each pair's rank -1 sample (one all_reduce of a slot per pair; rpc's
    server, tests/integration/rpc, is a rank with no slot)."""
    out = tmp_path / "pairs"
    argv = ["pairs", "--backend", "gloo", "--world-sizes", "4", "--sizes", "1K", "--iters", "2"]
    argv += ["--trials", "2", "--warmup", "1", "--quiet", "--rank-samples", "node"]
    assert run_cli([*argv, "--out", str(out), "--timeout", "120"]) == 0
    assert [p.name for p in find_rank_sample_files(out)] == ["ws4-node0.parquet"]
    results = pd.read_csv(out / "results.csv", dtype=str)
    pair_of = {row.measurement: {int(row.src), int(row.dst)} for row in results.itertuples()}
    per_rank = read_rank_samples(out).astype({"measurement": str})
    ranks = per_rank.groupby("measurement")["rank"].unique().map(set).to_dict()
    assert ranks == pair_of  # each pair's own two ranks
    # the 6 planned pairs; a rank that one round flagged has its pairs measured again, past the
    # plan (pairs confirm an outlier before naming it), each row with its own two ranks too
    planned = [m for m in ranks if (measurement_index(m, 4) or 0) < 6]
    assert len(planned) == 6, sorted(ranks)
    keys = ["measurement", "trial", "iter"]
    recomputed = per_rank.groupby(keys)["time_us"].max().reset_index()
    written = pd.read_csv(out / "samples.csv")
    assert set(written["rank"]) == {-1} and len(written) == len(recomputed) == len(ranks) * 2
    joined = written.merge(recomputed, on=keys, suffixes=("", "_max"))
    assert len(joined) == len(written)
    assert (joined["time_us"] == joined["time_us_max"]).all()
