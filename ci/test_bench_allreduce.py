"""Example pytest-benchmark tests for distbench's `comm_benchmark` fixture. Run them inside a
torchrun group (plain `pytest` skips them; the repository's own `pytest` never collects ci/):

    ci/bench-tests.sh ci/test_bench_allreduce.py --benchmark-autosave
    ci/bench-tests.sh ci/test_bench_allreduce.py --benchmark-compare \
        --benchmark-compare-fail=min:100%

The compare setting is the measured one: on a shared 2-core CPU box it failed 2 % of unchanged
pairs of runs (median:10% failed 84 %); see ci/bench-tests.sh.
Only rank 0 prints; a regression ends the output with one `REGRESSED name: why` line each.

Each test runs a fixed number of rounds on every rank; the numbers pytest-benchmark prints and saves
(rank 0 only) are per op and per round the slowest rank's time. extra_info carries size_bytes,
world_size, algbw_GBps and busbw_GBps.
"""

from __future__ import annotations

import os

import pytest

from distbench.pytest_plugin import CommBenchmark

SIZES = os.environ.get("DISTBENCH_BENCH_SIZES", "1K,64K,1M").split(",")


@pytest.mark.parametrize("size", SIZES)
def test_all_reduce(comm_benchmark: CommBenchmark, size: str) -> None:
    result = comm_benchmark("all_reduce", size=size, rounds=20, warmup_rounds=3)
    assert result.world_size >= 1


def test_broadcast_1m(comm_benchmark: CommBenchmark) -> None:
    result = comm_benchmark("broadcast", size="1M", root="0", rounds=20, warmup_rounds=3)
    assert result.size_bytes == 1 << 20
