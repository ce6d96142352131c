"""The pipeline run shared by test_pipeline_run.py and test_pipeline_report.py (a session
fixture, launched on first use). Tests read it; a test that changes its files works on a copy."""

from __future__ import annotations

import pytest

from tests.conftest import CliRun, run_cli


@pytest.fixture(scope="session")
def pipeline_w23(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    """World sizes 2 and 3, microbatches 1 and 4, every strategy (10 cases: pipelining-1f1b
    needs M >= W), an mlp of depth 4 and width 32, batch 16, 4 steps after 1 warmup."""
    out = tmp_path_factory.mktemp("pipeline-w23") / "run"
    done = run_cli(
        "pipeline", "--world-sizes", "2,3", "--microbatches", "1,4", "--depth", "4",
        "--width", "32", "--batch-size", "16", "--steps", "4", "--warmup", "1", "--out", str(out),
    )  # fmt: skip
    return CliRun(out, done)
