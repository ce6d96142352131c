"""Pairs runs shared by the e2e and report tests (session fixtures, each launched once, on first
use): the 6-rank run with rank 5 slowed, and the 3-rank all_reduce run. Tests read them; a test
that changes a run's files works on a copy (shutil.copytree to its tmp_path)."""

from __future__ import annotations

import pytest

from tests.conftest import CliRun
from tests.integration.pairs.test_pairs_e2e import SLOW_DELAY, STEADY, WINDOW, run_pairs


@pytest.fixture(scope="session")
def six_ranks_one_slow(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    """6 ranks, rank 5 slowed (tests/inject/slow_rank), steady windows, --fail-on-outlier."""
    out = tmp_path_factory.mktemp("pairs-6-slow") / "run"
    done = run_pairs(out, 6, f"5:{SLOW_DELAY}", *WINDOW, *STEADY, "--fail-on-outlier")
    return CliRun(out, done)


@pytest.fixture(scope="session")
def pairs_allreduce_3(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    """3 ranks, no wrapper, --primitive allreduce."""
    out = tmp_path_factory.mktemp("pairs-3-allreduce") / "run"
    return CliRun(out, run_pairs(out, 3, None, "--primitive", "allreduce"))
