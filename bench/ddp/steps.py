"""Timing of training steps in windows between barriers (docs/method.md, "Which rank's time").

The ranks of a training job are not aligned step by step: a fast rank's step i runs while a slow
one is still in step i - 1, so the per-step maximum over ranks is longer than any rank's time per
step. As nccl-tests does for collectives, each window of `window_steps` steps starts behind a
barrier (outside the clock) and is timed whole; the window's step time is the slowest rank's
window time / steps. Those windows are independent samples for a rank test, where consecutive
steps are not.

Each rank also keeps its own time per step (clock reads at every step boundary inside the window,
so its steps add up exactly to its windows): its own wall clock of the timed steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from distbench.primitives.base import Context
from distbench.ranks import max_over_ranks
from distbench.timing import Clock, barrier, drain

Batch = tuple[torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class Timed:
    """The timed steps of one strategy on this rank, and the slowest rank's windows."""

    window_steps: int
    step_us: list[float]
    """This rank's own time of each timed step (us); they add up to its windows."""
    loss: list[float]
    """This rank's loss on its shard, per timed step."""
    window_us: list[float]
    """This rank's own time of each window of steps (us), barriers excluded."""
    max_window_us: list[float]
    """Per window, the slowest rank's window time (us): identical on every rank."""

    @property
    def window_step_us(self) -> list[float]:
        """One sample per window: the slowest rank's window time / steps in the window (us)."""
        return [t / self.window_steps for t in self.max_window_us]


def train(
    strategy_module: nn.Module,
    after_backward: Callable[[], None],
    after_step: Callable[[int], None],
    optimizer: torch.optim.Optimizer,
    batches: list[Batch],
    warmup: int,
    window_steps: int,
    ctx: Context,
) -> Timed:
    """Run every batch as one step: `warmup` untimed, then the rest in windows of `window_steps`
    (len(batches) - warmup must be a multiple), each behind a barrier."""
    loss_fn = nn.CrossEntropyLoss()
    losses: list[torch.Tensor] = []
    step_us: list[float] = []
    window_us: list[float] = []
    for step, (x, y) in enumerate(batches):
        timed = step >= warmup
        if timed and (step - warmup) % window_steps == 0:
            drain(ctx.device)  # the previous window's (or warm-up's) work is finished
            barrier(ctx)  # and every rank starts this window together, outside the clock
            clock = Clock(ctx.device)  # a mark at every step boundary of the window
            clock.mark()
        optimizer.zero_grad()
        loss = loss_fn(strategy_module(x), y)
        loss.backward()
        after_backward()
        optimizer.step()
        after_step(step)
        if timed:
            clock.mark()
            losses.append(loss.detach())
            if (step - warmup + 1) % window_steps == 0:
                drain(ctx.device)  # the CUDA events are complete before they are read
                steps = clock.intervals_us()
                step_us += steps
                window_us.append(sum(steps))
    drain(ctx.device)
    return Timed(
        window_steps=window_steps,
        step_us=step_us,
        loss=[float(v) for v in torch.stack(losses).cpu().tolist()],
        window_us=window_us,
        max_window_us=max_over_ranks(ctx, window_us),
    )
