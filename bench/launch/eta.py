"""The progress line's ETA: how long the measurements still to come will take.

A measurement's time grows with its size where the work does (latency mode, a fixed --iters, the
copies of --check); a sweep runs its sizes smallest first, so the mean time of the measurements
done so far runs low: a new user's `distbench allreduce --mode both --dtype float32,bfloat16
--check` said `ETA ~0:07` at 0:02 and ended at 1:10. Where the plan's sizes are known (a comm
run), each finished measurement's seconds are fitted as a + b * size (least squares, a and b
never negative) and the ETA is that line summed over the sizes still to come, once the largest
size done is within EXTRAPOLATE of the largest to come; before, the mean time per measurement
times those left, shown as a floor (`ETA >= ~0:05`); without sizes, that mean.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

EXTRAPOLATE = 16
"""The most the line is carried past the largest size done (x 16: 4M from 256K)."""


class Eta:
    """Seconds left, from the measurements done and the sizes planned."""

    def __init__(self, planned: Iterable[int] = ()) -> None:
        self.left_sizes = Counter(int(s) for s in planned)
        """Planned sizes (bytes, with their multiplicity) not done yet; empty: sizes unknown."""
        self.done: list[tuple[float, float]] = []
        """(size, seconds) of each measurement this invocation timed."""

    def take(self, size: int | None) -> float:
        """A measurement of `size` is no longer to come (a resumed run's, or one just done):
        its planned size, the nearest where rounded down (3 ranks: 1K is 1008 B); 0 unknown."""
        if size is None or not self.left_sizes:
            return 0.0
        if self.left_sizes[size] == 0:
            asked = size
            size = min(self.left_sizes, key=lambda s: (abs(s - asked), s))
        self.left_sizes[size] -= 1
        if self.left_sizes[size] <= 0:
            del self.left_sizes[size]
        return float(size)

    def finished(self, size: int | None, seconds: float) -> None:
        """A measurement ended after `seconds`."""
        self.done.append((self.take(size), max(0.0, seconds)))

    def line(self) -> tuple[float, float]:
        """(a, b): seconds per measurement = a + b * size, fitted to those done."""
        n = len(self.done)
        mean_s = sum(s for s, _ in self.done) / n
        mean_t = sum(t for _, t in self.done) / n
        spread = sum((s - mean_s) ** 2 for s, _ in self.done)
        if spread <= 0:
            return mean_t, 0.0
        b = max(0.0, sum((s - mean_s) * (t - mean_t) for s, t in self.done) / spread)
        a = mean_t - b * mean_s
        if a < 0:  # through the origin instead: a = 0, b from sum(s t) / sum(s^2)
            a, b = 0.0, sum(s * t for s, t in self.done) / sum(s * s for s, _ in self.done)
        return a, b

    def seconds_left(self, remaining: int) -> tuple[float, bool] | None:
        """(seconds for `remaining` measurements to come, whether that is only a floor); None
        before any is done. With the planned sizes known, two sizes done and the largest to
        come at most EXTRAPOLATE times the largest done: the fitted line over them. Else the
        mean time so far times `remaining`, a floor where larger sizes are still to come (a
        line through 1K-64K says nothing of 64M: it said 8:50 for 0:46)."""
        if not self.done:
            return None
        sizes = list(self.left_sizes.elements())
        largest = max(s for s, _ in self.done)
        mean = remaining * sum(t for _, t in self.done) / len(self.done)
        if not sizes or len(sizes) != remaining:
            return mean, False
        if len({s for s, _ in self.done}) < 2 or max(sizes) > EXTRAPOLATE * largest:
            return mean, max(sizes) > largest
        a, b = self.line()
        return sum(a + b * s for s in sizes), False
