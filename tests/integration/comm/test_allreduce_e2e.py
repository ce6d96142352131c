"""`distbench allreduce` end to end on a real 2-rank gloo group under torchrun: the table, the
CSV, the samples and the manifest, as a user would read them."""

from __future__ import annotations

import csv
import datetime
import json
import os
from pathlib import Path

import pytest

from distbench.collectors.schema import SCHEMA_VERSION, ResultRow, SampleRow, column_names
from tests.conftest import CliRun, run_cli

pytestmark = pytest.mark.slow


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_allreduce_gloo_check(allreduce_2rank: CliRun) -> None:
    """The suite's shared unlabelled run (tests/conftest.py ALLREDUCE_2RANK: 1K,64K, --check,
    --mode both, 4 iters, 3 trials); --label is checked on test_ddp.py's end-to-end run."""
    out, result = allreduce_2rank.out, allreduce_2rank.done
    assert result.returncode == 0, result.stderr + result.stdout
    assert "# all_reduce  backend=gloo" in result.stdout
    assert f"run directory: {out}" in result.stdout

    rows = read_csv(out / "results.csv")
    assert list(rows[0].keys()) == column_names(ResultRow)
    assert [(r["mode"], int(r["size_bytes"])) for r in rows] == [
        ("throughput", 1024),
        ("throughput", 65536),
        ("latency", 1024),
        ("latency", 65536),
    ]
    for row in rows:
        assert row["primitive"] == "all_reduce"
        assert row["backend"] == "gloo" and row["device"] == "cpu"
        assert row["world_size"] == "2" and row["ranks"] == "0-1" and row["nnodes"] == "1"
        assert row["timer"] == "perf_counter"
        assert row["label"] == "" and row["run_id"] == "run"
        assert row["wrong"] == "0"
        assert int(row["count"]) == int(row["size_bytes"]) // 4
        p50, algbw = float(row["time_us_p50"]), float(row["algbw_GBps"])
        assert p50 > 0
        assert algbw == pytest.approx(int(row["size_bytes"]) / (p50 * 1e-6) / 1e9)
        assert float(row["busbw_GBps"]) == pytest.approx(algbw * 1.0)  # 2(n-1)/n = 1 at n = 2
        assert float(row["time_us_min"]) <= p50 <= float(row["time_us_max"])
    assert [r["samples"] for r in rows] == ["3", "3", "12", "12"]

    samples = read_csv(out / "samples.csv")
    assert list(samples[0].keys()) == column_names(SampleRow)
    for row in rows:
        mine = [s for s in samples if s["measurement"] == row["measurement"]]
        maxed = sorted(float(s["time_us"]) for s in mine if s["rank"] == "-1")
        assert len(maxed) == int(row["samples"])
        # samples.csv holds the max over ranks only (#27); each rank's own samples go to
        # rank-samples/ with --rank-samples (tests/integration/launch/test_rank_samples.py).
        assert {s["rank"] for s in mine} == {"-1"}
        assert float(row["time_us_min"]) == pytest.approx(maxed[0])

    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["status"] == "completed"
    assert manifest["run_id"] == "run"
    assert manifest["torch"].startswith("2.")
    assert manifest["cpu_cores"] >= 1 and manifest["memory_bytes"] > 0
    assert manifest["cpu_usable"] == len(os.sched_getaffinity(0))  # taskset narrows it
    assert len(manifest["load_avg_start"]) == len(manifest["load_avg_end"]) == 3  # Linux
    assert len(manifest["cpu_times_start"]) == 8 and 0 <= manifest["cpu_steal_share"] < 1
    assert manifest["launches"][0]["returncode"] == 0
    assert "allreduce" in manifest["command"]
    assert (out / "logs" / "ws2-rank0.log").exists()
    assert (out / "logs" / "ws2-rank1.log").exists()


def test_default_run_dirs_never_collide(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run without --out lands in results/<UTC time>-all_reduce; a second one started in the
    same second gets its own directory (-2). One real run through the CLI, then the CLI's own
    run-dir maker (launch/run.py prepare_run_dir) called twice more in one frozen second."""
    args = ("allreduce", "--sizes", "1K", "--iters", "1", "--warmup", "0", "--trials", "1")
    first = run_cli(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    [run] = (tmp_path / "results").iterdir()
    assert run.name.endswith("-all_reduce")
    assert len(read_csv(run / "results.csv")) == 1

    from distbench.launch import run as launch_run

    class Frozen(datetime.datetime):
        @classmethod
        def now(cls, tz: datetime.tzinfo | None = None) -> Frozen:
            return cls(2026, 12, 2, 9, 0, 0, tzinfo=tz)

    monkeypatch.setattr(launch_run, "datetime", Frozen)
    monkeypatch.chdir(tmp_path)
    made = [launch_run.prepare_run_dir(None, "all_reduce", "") for _ in range(2)]
    assert [m.name for m in made] == [
        "20261202T090000Z-all_reduce",
        "20261202T090000Z-all_reduce-2",
    ]
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == sorted(
        [run.name, *(m.name for m in made)]
    )
