"""`distbench sweep`: the TOML matrix file, the options that may go with it, the shipped example run
end to end (the nightly job's input), and several specs launched into one run directory. The half
that launches or runs for seconds; the in-process half, and the file's whole story:
tests/unit/cli/test_sweep.py."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import pytest

from distbench.comm.spec import CommSpec
from distbench.launch.run import execute
from distbench.primitives.registry import PRIMITIVES
from distbench.spec import LaunchSpec, RunSpec
from tests.conftest import run_cli
from tests.unit.cli.test_sweep import EXAMPLE


@pytest.mark.slow
def test_the_shipped_example_runs_with_checks(tmp_path: Path) -> None:
    """The nightly job's call: distbench sweep --config ci/sweep-example.toml --out DIR."""
    out = tmp_path / "nightly"
    result = run_cli("sweep", "--config", str(EXAMPLE), "--out", str(out))
    assert result.returncode == 0, result.stderr
    with open(out / "results.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["primitive"] for r in rows} == set(PRIMITIVES)
    assert {r["world_size"] for r in rows} == {"2", "3"}
    assert {r["dtype"] for r in rows} == {"float32", "bfloat16"}
    assert {r["wrong"] for r in rows} == {"0"}
    assert len({r["measurement"] for r in rows}) == len(rows)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed"


@pytest.mark.slow
def test_several_specs_run_into_one_directory_with_unique_ids(tmp_path: Path) -> None:
    """What a matrix over backends does (here gloo twice, as a CPU box has no NCCL)."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    launch = LaunchSpec(
        backend="gloo", device="cpu", world_sizes=(2,), run_dir=str(run_dir), run_id="run"
    )
    workload = CommSpec(
        primitives=("broadcast", "all_to_all"), sizes=(1024,), iters=2, warmup=1, trials=2
    )
    first = RunSpec(launch=launch, workload=workload)
    second = RunSpec(launch=launch, workload=replace(workload, tag="again/"))
    assert execute(first, title="sweep", more=[second]) == 0
    with open(run_dir / "results.csv", newline="") as handle:
        ids = [row["measurement"] for row in csv.DictReader(handle)]
    assert ids == ["ws2/i0", "ws2/i1", "again/ws2/i0", "again/ws2/i1"]
    # a later part's spec is named after its tag (a backend's `nccl/` -> spec-nccl.json)
    assert (run_dir / "spec.json").exists() and (run_dir / "spec-again.json").exists()
    assert sorted(p.name for p in (run_dir / "logs" / "gloo").glob("ws2-rank*.log")) == [
        "ws2-rank0.log",
        "ws2-rank1.log",
    ]
    assert (run_dir / "logs" / "ws2-rank0.log").exists()  # the last spec's logs stay in logs/
    launches = json.loads((run_dir / "manifest.json").read_text())["launches"]
    assert [(x["backend"], x["world_size"], x["returncode"]) for x in launches] == [
        ("gloo", 2, 0),
        ("gloo", 2, 0),
    ]
    assert launches[1]["command"][-1].endswith("spec-again.json")
