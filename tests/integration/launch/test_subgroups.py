"""World-size sweeps: one launch of the largest size, smaller sizes on new_group subgroups of ranks
0..k-1 (real gloo groups), against --separate-launches. The half that launches or runs for seconds;
the in-process half, and the file's whole story: tests/unit/launch/test_subgroups.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from distbench.collectors.rank_samples import read_rank_samples
from distbench.collectors.sink import read_rows

TINY = ["--backend", "gloo", "--sizes", "1K,64K", "--iters", "3", "--warmup", "1", "--trials", "2"]


def distbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "distbench", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
def test_one_launch_measures_every_world_size_on_subgroups(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = distbench(
        "allreduce", *TINY, "--world-sizes", "1,2,3", "--check", "--rank-samples", "node",
        "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = read_rows(out / "results.csv")
    seen = [(r["measurement"], r["world_size"], r["ranks"], r["wrong"]) for r in rows]
    assert seen == [
        ("ws1/i0", "1", "0", "0"),
        ("ws1/i1", "1", "0", "0"),
        ("ws2/i0", "2", "0-1", "0"),
        ("ws2/i1", "2", "0-1", "0"),
        ("ws3/i0", "3", "0-2", "0"),
        ("ws3/i1", "3", "0-2", "0"),
    ]
    assert [float(r["busbw_factor"]) for r in rows[::2]] == [0.0, 1.0, 4 / 3]
    manifest = json.loads((out / "manifest.json").read_text())
    assert [launch["world_size"] for launch in manifest["launches"]] == [3]
    rank2 = (out / "logs" / "ws3-rank2.log").read_text()
    assert "world size 2: waiting outside the subgroup of ranks 0-1" in rank2
    # samples.csv: the max over ranks; rank-samples/: each measurement's members only
    assert {s["rank"] for s in read_rows(out / "samples.csv")} == {"-1"}
    samples = read_rank_samples(out)
    ranks_of = {m: set(samples[samples["measurement"] == m]["rank"]) for m, *_ in seen}
    assert ranks_of["ws2/i0"] == {0, 1}
    assert ranks_of["ws3/i1"] == {0, 1, 2}


@pytest.mark.slow
def test_separate_launches_keep_the_old_behaviour(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = distbench(
        "allreduce", *TINY, "--world-sizes", "1,2", "--separate-launches", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert [launch["world_size"] for launch in manifest["launches"]] == [1, 2]
    rows = read_rows(out / "results.csv")
    assert [(r["world_size"], r["ranks"]) for r in rows] == [("1", "0")] * 2 + [("2", "0-1")] * 2
