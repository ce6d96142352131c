"""16 ranks on this box (#12 §6; ci/scale-smoke.sh runs 32): one launch with subgroups of 8 and
16 ranks finishes, writes every row, leaves no heartbeat file, and merges a `ranks` map with an
entry per rank and one node into manifest.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from distbench.collectors.sink import read_rows
from tests.conftest import run_cli


@pytest.mark.slow
def test_sixteen_ranks_subgroups_and_manifest_merge(tmp_path: Path) -> None:
    out = tmp_path / "run"
    tiny = ["--backend", "gloo", "--iters", "2", "--warmup", "1", "--trials", "2"]
    done = run_cli("allreduce", *tiny, "--world-sizes", "8,16", "--sizes", "1K", "--out", str(out))
    assert done.returncode == 0, done.stderr
    rows = read_rows(out / "results.csv")
    assert sorted(row["world_size"] for row in rows) == ["16", "8"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    assert sorted(manifest["ranks"], key=int) == [str(r) for r in range(16)]
    assert list(manifest["nodes"]) == ["0"]
    assert not list((out / "logs").glob("*.alive"))
