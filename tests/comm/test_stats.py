"""Exact tests of the statistics and bandwidth formulas."""

from __future__ import annotations

import math

import pytest

from distbench.primitives import get_primitive
from distbench.stats import Stats, algbw_gbps, percentile


def test_percentiles_interpolate_linearly() -> None:
    values = [1.0, 2.0, 3.0, 4.0]
    assert percentile(values, 50) == 2.5
    assert percentile(values, 0) == 1.0
    assert percentile(values, 100) == 4.0
    assert percentile(values, 95) == pytest.approx(3.85)
    assert percentile([7.0], 99) == 7.0


def test_stats_columns() -> None:
    stats = Stats((4.0, 1.0, 3.0, 2.0, 10.0))
    columns = stats.as_columns()
    assert columns["time_us_p50"] == 3.0
    assert columns["time_us_mean"] == 4.0
    assert columns["time_us_min"] == 1.0
    assert columns["time_us_max"] == 10.0
    assert columns["time_us_p95"] == pytest.approx(8.8)
    assert columns["time_us_p99"] == pytest.approx(9.76)
    assert columns["time_us_std"] == pytest.approx(math.sqrt(12.5))
    assert Stats((5.0,)).std == 0.0
    with pytest.raises(ValueError):
        Stats(())


def test_algbw_is_bytes_per_second_over_1e9() -> None:
    # 1 GB in 1 s = 1 GB/s; 64 MiB in 1000 us = 67.108864 GB/s
    assert algbw_gbps(1_000_000_000, 1e6) == pytest.approx(1.0)
    assert algbw_gbps(64 << 20, 1000.0) == pytest.approx(67.108864)
    assert algbw_gbps(1024, 0.0) == 0.0


@pytest.mark.parametrize(("n", "factor"), [(1, 0.0), (2, 1.0), (4, 1.5), (8, 1.75)])
def test_all_reduce_busbw_factor(n: int, factor: float) -> None:
    assert get_primitive("all_reduce").busbw_factor(n) == factor
