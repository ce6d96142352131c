"""`distbench ddp --env NAME=V1,V2` on real gloo launches: one launch per combination, the variable
set in the workers (their recorded environment, manifest launches[].worker_env), each row's `env`
column naming its combination, unique measurement ids, scaling efficiency against the 1-rank row
of the same combination, and the report keeping the combinations apart."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from distbench.collectors.schema import DDP_MATCH_KEY
from distbench.reports.load import load_runs
from tests.conftest import run_cli

pytestmark = pytest.mark.slow


def test_ddp_env_sweep_runs_one_launch_per_value(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = run_cli(
        "ddp", "--backend", "gloo", "--world-sizes", "1,2", "--strategies", "ddp,ddp-nocomm",
        "--width", "8", "--depth", "2", "--steps", "2", "--warmup", "0", "--quiet",
        "--out", str(run_dir), "--env", "GLOO_DISTBENCH_TEST=a,b",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with open(run_dir / "results.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    envs = ["GLOO_DISTBENCH_TEST=a"] * 4 + ["GLOO_DISTBENCH_TEST=b"] * 4
    assert [row["env"] for row in rows] == envs
    assert [row["measurement"] for row in rows] == [
        "ws1/i0", "ws1/i1", "ws2/i0", "ws2/i1",
        "env1/ws1/i0", "env1/ws1/i1", "env1/ws2/i0", "env1/ws2/i1",
    ]  # fmt: skip
    # each combination's 2-rank rows scale against its own 1-rank rows
    assert all(row["scaling_efficiency"] for row in rows)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    recorded = [launch["worker_env"]["GLOO_DISTBENCH_TEST"] for launch in manifest["launches"]]
    assert sorted(set(recorded)) == ["a", "b"] and recorded == sorted(recorded)
    assert "GLOO_DISTBENCH_TEST" not in manifest["env"]  # only the workers had it
    # the terminal table names each combination's tables
    assert "# env: GLOO_DISTBENCH_TEST=a" in done.stdout
    assert "# env: GLOO_DISTBENCH_TEST=b" in done.stdout
    # env is part of the ddp case: the report's loader sees 8 distinct cases, not 4
    loaded = load_runs([run_dir])
    assert len(loaded.ddp) == 8
    assert len(loaded.ddp[list(DDP_MATCH_KEY)].drop_duplicates()) == 8
