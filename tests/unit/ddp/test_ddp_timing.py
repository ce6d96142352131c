"""DDP step times on real 2-rank gloo groups: windows between barriers give the job's real step
time, rates come from the mean, and comm_hidden_share reads 0 for a strategy that cannot overlap.

No `from __future__ import annotations` here: DDP checks a comm hook's annotations against the real
types (dist.GradBucket, Future[Tensor]) and refuses the strings that import would leave.
"""

from distbench.ddp.spec import DdpSpec


def test_the_auto_window_gives_ten_windows_of_32_steps_for_320_steps() -> None:
    """The window the test above gives by --window-steps is the one the auto rule picks for the
    320 steps it once ran: 10 windows of 32."""
    spec = DdpSpec(steps=320)
    assert spec.window_steps == 0 and spec.window_length() == 32
    assert spec.steps // spec.window_length() == 10
