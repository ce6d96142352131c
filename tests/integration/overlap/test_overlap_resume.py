"""`distbench overlap --resume` and `--env` on real 2-rank gloo launches: a run cut after its first
row (as an interrupted run leaves it) is finished with only the missing rows measured, the kept
row untouched; `--env` gives one launch per combination and each row its combination."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tests.conftest import run_cli

TINY = ["--backend", "gloo", "--world-sizes", "2", "--sizes", "16K", "--compute", "32"]
QUICK = ["--iters", "2", "--trials", "2", "--warmup", "1", "--quiet"]


def test_resume_measures_only_the_missing_rows(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = run_cli(
        "overlap", *TINY, *QUICK, "--primitives", "allreduce,broadcast", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr + done.stdout
    full = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert list(full["collective"]) == ["all_reduce", "broadcast"]
    lines = (out / "results.csv").read_text().splitlines()
    (out / "results.csv").write_text("\n".join(lines[:2]) + "\n")  # the first row kept
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted"}))

    resumed = run_cli("overlap", "--resume", str(out))
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    rows = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert list(rows["measurement"]) == list(full["measurement"])
    assert list(rows["collective"]) == ["all_reduce", "broadcast"]
    assert rows.iloc[0].to_dict() == full.iloc[0].to_dict()  # the kept row, as it was
    assert json.loads((out / "manifest.json").read_text())["status"] == "completed"


def test_env_gives_each_combination_its_launch_and_rows(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = run_cli(
        "overlap", *TINY, *QUICK, "--primitives", "allreduce", "--out", str(out),
        "--env", "GLOO_DISTBENCH_TEST=a,b",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    rows = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert list(rows["env"]) == ["GLOO_DISTBENCH_TEST=a", "GLOO_DISTBENCH_TEST=b"]
    assert rows["measurement"].is_unique
    launches = json.loads((out / "manifest.json").read_text())["launches"]
    assert [launch["worker_env"]["GLOO_DISTBENCH_TEST"] for launch in launches] == ["a", "b"]
