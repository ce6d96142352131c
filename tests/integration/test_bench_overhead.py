"""The harness-overhead benchmark in ci/ runs (its figures go in the README; no speed asserted)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.paths import ROOT

pytestmark = pytest.mark.slow


def test_bench_overhead_prints_a_row_per_size() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node=2",
            str(ROOT / "ci" / "bench_overhead.py"),
            "--sizes",
            "4,1K",
            "--rounds",
            "3",
            "--iters",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [line.split() for line in result.stdout.splitlines() if not line.startswith("#")]
    assert [row[0] for row in rows] == ["4", "1024"]
    for row in rows:
        bare, harness, ratio = float(row[1]), float(row[2]), float(row[3])
        assert bare > 0 and harness > 0
        assert ratio == pytest.approx(harness / bare, rel=2e-3, abs=1e-3)  # printed rounded
        assert row[-1] in ("ok", "OUTSIDE")
