"""`distbench overlap`'s pure logic: the figures from the phases' times (exact numbers), the
option parsers and the spec's own checks."""

from __future__ import annotations

import math

import pytest

from distbench.overlap.args import parse_compute, parse_overlap_primitives, parse_threads
from distbench.overlap.metrics import overlap_figures
from distbench.overlap.spec import OverlapSpec, plan_size
from distbench.parse import UsageError


def test_perfect_overlap_is_one_and_serialised_is_zero() -> None:
    perfect = overlap_figures(100.0, 40.0, 100.0, 100.0, 40.0, 40.0)
    assert perfect.overlap_efficiency == 1.0
    assert perfect.compute_slowdown == 1.0 and perfect.comm_slowdown == 1.0
    assert perfect.osu_overlap_pct == 100.0
    serial = overlap_figures(100.0, 40.0, 140.0, 100.0, 140.0, 40.0)
    assert serial.overlap_efficiency == 0.0
    assert serial.comm_slowdown == 3.5
    assert serial.osu_overlap_pct == 0.0


def test_slower_together_is_negative_and_osu_clips_at_zero() -> None:
    """Competing for the same cores: both takes longer than one after the other."""
    worse = overlap_figures(100.0, 50.0, 180.0, 150.0, 170.0, 50.0)
    assert worse.overlap_efficiency == pytest.approx(-30.0 / 50.0)
    assert worse.compute_slowdown == 1.5
    assert worse.comm_slowdown == pytest.approx(3.4)
    # OSU subtracts the slowed compute: 100 - (180 - 150) / 50 x 100 = 40 % "overlap" although
    # running them together took longer than one after the other
    assert worse.osu_overlap_pct == pytest.approx(40.0)
    assert overlap_figures(100.0, 50.0, 200.0, 100.0, 190.0, 50.0).osu_overlap_pct == 0.0  # clipped


def test_osu_figure_uses_the_compute_inside_both() -> None:
    """OSU: 100 - (overall - compute in the overlapped loop) / pure comm x 100."""
    half = overlap_figures(100.0, 40.0, 120.0, 100.0, 120.0, 40.0)
    assert half.osu_overlap_pct == pytest.approx(50.0)
    assert half.overlap_efficiency == pytest.approx(0.5)  # equal when compute is unslowed
    slowed = overlap_figures(100.0, 40.0, 120.0, 110.0, 120.0, 40.0)
    assert slowed.osu_overlap_pct == pytest.approx(75.0)  # the slowed compute counts as hidden
    assert slowed.overlap_efficiency == pytest.approx(0.5)


def test_comm_slowdown_compares_like_with_like() -> None:
    """Inside `both` and alone, the collective is timed issue to completion by one clock; the
    host's t_comm (with the wait's wake-up) does not enter the slowdown."""
    figures = overlap_figures(100.0, 50.0, 120.0, 100.0, 60.0, 40.0)
    assert figures.comm_slowdown == pytest.approx(1.5)
    assert figures.overlap_efficiency == pytest.approx(0.6)  # host times: (100 + 50 - 120) / 50


def test_zero_times_give_nan_not_an_error() -> None:
    figures = overlap_figures(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    assert math.isnan(figures.overlap_efficiency) and math.isnan(figures.comm_slowdown)


def test_parsers_read_names_lists_and_ranges() -> None:
    assert parse_overlap_primitives("allreduce,all_gather,reduce-scatter") == (
        "all_reduce",
        "all_gather",
        "reduce_scatter",
    )
    assert parse_compute("512,128,512") == (512, 128)
    assert parse_threads("1,2,0") == (1, 2, 0)
    with pytest.raises(UsageError, match="sendrecv"):
        parse_overlap_primitives("sendrecv")
    with pytest.raises(UsageError, match="up to 16384"):
        parse_compute("20000")


def test_plan_counts_every_case() -> None:
    spec = OverlapSpec(sizes=(1, 2), primitives=("all_reduce", "broadcast"), compute=(8,),
                       compute_threads=(1, 2), modes=("throughput", "latency"))  # fmt: skip
    assert plan_size(spec, 2) == 2 * 2 * 1 * 2 * 2
    with pytest.raises(UsageError):
        OverlapSpec(sizes=(1,), primitives=("all_to_all",))
