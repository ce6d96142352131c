"""`--env NAME=V1,V2` (repeatable) on real gloo launches: one launch per combination, the variables
set in the workers (their recorded environment, manifest launches[].worker_env), each row's `env`
column naming its combination, and the report drawing one line per combination."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from distbench.reports.load import load_runs
from distbench.reports.report import analysis
from tests.conftest import CliRun, run_cli


def test_two_env_axes_make_four_launches_and_four_lines(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = run_cli(
        "allreduce", "--backend", "gloo", "--world-sizes", "2", "--sizes", "1K", "--iters", "1",
        "--trials", "2", "--warmup", "0", "--quiet", "--out", str(run_dir),
        "--env", "NCCL_ALGO=Ring,Tree", "--env", "GLOO_DISTBENCH_TEST=a,b",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with open(run_dir / "results.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    combos = [
        "NCCL_ALGO=Ring GLOO_DISTBENCH_TEST=a",
        "NCCL_ALGO=Ring GLOO_DISTBENCH_TEST=b",
        "NCCL_ALGO=Tree GLOO_DISTBENCH_TEST=a",
        "NCCL_ALGO=Tree GLOO_DISTBENCH_TEST=b",
    ]
    assert [row["env"] for row in rows] == combos
    assert len({row["measurement"] for row in rows}) == 4
    launches = json.loads((run_dir / "manifest.json").read_text())["launches"]
    recorded = [
        (launch["worker_env"]["NCCL_ALGO"], launch["worker_env"]["GLOO_DISTBENCH_TEST"])
        for launch in launches
    ]
    assert recorded == [("Ring", "a"), ("Ring", "b"), ("Tree", "a"), ("Tree", "b")]
    # the CLI's own environment is untouched: only the workers had them
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert "GLOO_DISTBENCH_TEST" not in manifest["env"]
    loaded = load_runs([run_dir])
    names = analysis.series_names(loaded.comm, with_source=False)
    assert sorted(names) == [f"gloo n=2 {combo}" for combo in combos]


def test_rows_without_env_keep_an_empty_env_column(allreduce_2rank: CliRun) -> None:
    """The suite's shared 2-rank allreduce (tests/conftest.py), run without --env."""
    with open(allreduce_2rank.out / "results.csv", newline="") as handle:
        assert [row["env"] for row in csv.DictReader(handle)] == [""] * 4
