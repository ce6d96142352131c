"""Runs shared by the tests of tests/integration/comm (session fixtures, launched on first use).
Tests read them; a test that changes a run's files works on a copy (shutil.copytree to its
tmp_path)."""

from __future__ import annotations

import pytest

from tests.conftest import CliRun, run_cli


@pytest.fixture(scope="session")
def two_apis(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    """One launch of every API's trials in the same rounds: allreduce, 2 ranks, 1K and 4K,
    --api c10d,functional, interleaved, --check (test_api_list.py; test_api.py splits it by
    api for report and compare)."""
    out = tmp_path_factory.mktemp("two-apis") / "run"
    done = run_cli(
        "allreduce", "--backend", "gloo", "--world-sizes", "2", "--sizes", "1K,4K",
        "--api", "c10d,functional", "--iters", "2", "--warmup", "1", "--trials", "2",
        "--check", "--order", "interleaved", "--out", str(out),
    )  # fmt: skip
    return CliRun(out, done)
