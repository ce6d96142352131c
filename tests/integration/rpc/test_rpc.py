"""`distbench rpc` on real gloo launches over TensorPipe. The half that launches or runs for
seconds; the in-process half, and the file's whole story: tests/unit/rpc/test_rpc.py."""

from __future__ import annotations

import statistics
from pathlib import Path

import pandas as pd
import pytest

from distbench.collectors.rank_samples import find_rank_sample_files, read_rank_samples
from tests.conftest import run_cli, run_in_process

PATTERNS = {
    "sync": "latency",
    "async:window=4": "throughput",
    "rref": "latency",
    "ps": "throughput",
}


@pytest.fixture(scope="module")
def rpc_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rpc") / "run"
    done = run_cli(
        "rpc", "--backend", "gloo", "--world-sizes", "2,3", "--pattern", "all", "--sizes", "8,64K",
        "--window", "4", "--iters", "4", "--trials", "3", "--warmup", "1", "--out", str(out),
        "--quiet", "--timeout", "120", "--rank-samples", "all",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


def test_one_row_per_world_size_pattern_and_size(rpc_run: Path) -> None:
    rows = pd.read_csv(rpc_run / "results.csv", keep_default_na=False)
    assert set(rows["primitive"]) == {"rpc"}
    assert len(rows) == 2 * len(PATTERNS) * 2
    for world_size in (2, 3):
        part = rows[rows["world_size"] == world_size]
        assert sorted(zip(part["pattern"], part["size_bytes"], strict=True)) == sorted(
            (p, s) for p in PATTERNS for s in (8, 64 << 10)
        )
        assert {p: m for p, m in zip(part["pattern"], part["mode"], strict=True)} == PATTERNS
    assert (rows["time_us_min"] > 0).all()
    latency = rows[rows["mode"] == "latency"]
    assert (latency["samples"] == 3 * 4).all()  # every call of every trial
    assert (rows[rows["mode"] == "throughput"]["samples"] == 3).all()  # one per trial


def test_row_statistics_equal_those_recomputed_from_samples(rpc_run: Path) -> None:
    """samples.csv holds the maximum over the callers (rank -1) only; every rank's own samples
    are in its Parquet file (--rank-samples all), none for ps's server, and their maximum is
    samples.csv's."""
    rows = pd.read_csv(rpc_run / "results.csv", keep_default_na=False)
    samples = pd.read_csv(rpc_run / "samples.csv", keep_default_na=False)
    assert set(samples["rank"]) == {-1}
    names = sorted(p.name for p in find_rank_sample_files(rpc_run))
    assert names == ["ws2-rank0.parquet", "ws2-rank1.parquet"] + [
        f"ws3-rank{r}.parquet" for r in range(3)
    ]
    own = read_rank_samples(rpc_run).astype({"measurement": str})
    for row in rows.itertuples():
        mine = samples[samples["measurement"] == row.measurement]
        worst = mine.sort_values(["trial", "iter"])["time_us"].tolist()
        callers = own[own["measurement"] == row.measurement]
        expected = {0} if row.pattern == "ps" else set()
        assert set(range(int(str(row.world_size)))) - set(callers["rank"]) == expected
        slowest = callers.groupby(["trial", "iter"])["time_us"].max().sort_index().tolist()
        assert slowest == pytest.approx(worst)
        assert row.time_us_p50 == pytest.approx(statistics.median(worst))
        assert row.time_us_mean == pytest.approx(statistics.fmean(worst))
        assert row.time_us_min == pytest.approx(min(worst))
        assert row.time_us_max == pytest.approx(max(worst))
        assert row.algbw_GBps == pytest.approx(
            float(str(row.size_bytes)) / float(str(row.time_us_p50)) / 1e3
        )


def test_report_and_compare_accept_rpc_rows(rpc_run: Path, tmp_path: Path) -> None:
    report = run_in_process("report", str(rpc_run), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "report" / "report.md").read_text()
    rpc = page[page.index("## RPC") :]
    assert "| run | ranks | pattern | mode | size | p50 µs | calls/s | algbw GB/s |" in rpc
    assert sum(line.startswith("| run | 3 | ps |") for line in rpc.splitlines()) == 2  # 8, 64K
    assert (tmp_path / "report" / "fig-rpc.png").stat().st_size > 0  # two sizes: a figure
    assert "## Collectives" not in page and "## Model fit" not in page  # rpc is no collective
    compare = run_in_process("compare", str(rpc_run), str(rpc_run))
    assert compare.returncode == 0, compare.stdout + compare.stderr
    assert "distbench compare: pass (16 " in compare.stdout  # every row alike: itself
