"""The progress line's ETA (distbench.launch.eta): sizes planned and the time each size took. A
new user's `distbench allreduce --mode both --dtype float32,bfloat16 --check` said `ETA ~0:07`
at 0:02 and ended at 1:10: the mean time of the small sizes done, times those left."""

from __future__ import annotations

import pytest

from distbench.launch.eta import Eta

SIZES = [1024 * 4**k for k in range(8)]  # 1K .. 16M, as a sweep runs them: smallest first


def test_seconds_grow_with_size_so_the_sizes_to_come_count() -> None:
    eta = Eta(SIZES * 2)  # two dtypes
    for size in SIZES[:3]:  # 1K-16K took 0.1 s + 1 s per MiB: 16M is 1,024x the largest done
        eta.finished(size, 0.1 + size / 2**20)
    left = SIZES[3:] + SIZES
    truth = sum(0.1 + s / 2**20 for s in left)
    mean = len(left) * sum(0.1 + s / 2**20 for s in SIZES[:3]) / 3
    assert eta.seconds_left(len(left)) == (pytest.approx(mean), True)  # a floor, said as one
    assert mean < truth / 20
    for size in SIZES[3:6]:  # up to 1M: 16M is 16x the largest done, the line may reach it
        eta.finished(size, 0.1 + size / 2**20)
    left = SIZES[6:] + SIZES
    truth = sum(0.1 + s / 2**20 for s in left)
    seconds, floor = eta.seconds_left(len(left)) or (0.0, True)
    assert seconds == pytest.approx(truth, rel=1e-6) and not floor


def test_without_sizes_or_before_two_sizes_it_is_the_mean() -> None:
    plain = Eta()
    assert plain.seconds_left(5) is None
    plain.finished(None, 2.0)
    plain.finished(None, 4.0)
    assert plain.seconds_left(5) == (pytest.approx(15.0), False)
    one = Eta(SIZES)
    one.finished(SIZES[0], 3.0)
    assert one.seconds_left(7) == (pytest.approx(21.0), True)  # larger sizes to come


def test_a_rounded_size_takes_the_nearest_planned_and_resumed_rows_are_not_to_come() -> None:
    eta = Eta([1024, 1024, 65536])
    assert eta.take(1008) == 1024  # 1K at 3 ranks, whole elements per rank
    eta.finished(65520, 1.0)
    assert sorted(eta.left_sizes.elements()) == [1024]
    assert eta.take(None) == 0.0


def test_the_line_is_never_negative() -> None:
    """Times that fall with size (a warm-up on the first) give a flat line, not a negative
    slope; an intercept below 0 is fitted through the origin instead."""
    falling = Eta(SIZES)
    falling.finished(SIZES[0], 5.0)
    falling.finished(SIZES[1], 1.0)
    a, b = falling.line()
    assert b == 0.0 and a == pytest.approx(3.0)
    steep = Eta(SIZES)
    steep.finished(SIZES[0], 0.0)
    steep.finished(SIZES[1], 0.0)
    steep.finished(SIZES[4], 10.0)
    a, b = steep.line()
    assert a >= 0 and b > 0
