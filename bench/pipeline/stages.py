"""One rank's stage of the pipelined model, and the meter that measures how long it computes.

The full model is built as `distbench ddp` builds it (same seed, same weights), cut into units
(spec.unit_params) and split by spec.partition; rank s keeps units[starts[s]:starts[s + 1]].

The meter (Busy) wraps the stage: its forward is timed whole, its backward from the moment the
gradient reaches the stage's output to the moment it leaves through the stage's input (two
identity autograd functions mark both ends); the runner also counts the optimizer's zero_grad and
step as busy (pipeline/runner.py). Everything else in a step (waiting for a neighbour, sending,
the last stage's loss) is idle time: the bubble is 1 - busy / step time.

The clock is timing.py's: CUDA events recorded on the stream at each end of a busy interval, read
once the window has drained (a synchronize per interval, as before v4, serialised the transfers
with the compute and stretched the step and the bubble it measures); perf_counter on CPU, where
the work is done when the call returns.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import torch
from torch import nn

from distbench.ddp.models import build_model
from distbench.pipeline.spec import PipelineSpec, partition, unit_params


class MeanHead(nn.Module):
    """The transformer's last unit: mean over the sequence, then its Linear head."""

    def __init__(self, head: nn.Module) -> None:
        super().__init__()
        self.head = head

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.head(hidden.mean(dim=1))  # [batch, seq, width] -> [batch, classes]


def build_units(model: nn.Module, kind: str) -> list[nn.Module]:
    """The model's units in order (sharing its parameters), as spec.unit_params counts them."""
    if kind == "mlp":
        layers = list(model.layers)  # type: ignore[arg-type]
        pairs = [nn.Sequential(layers[i], layers[i + 1]) for i in range(0, len(layers) - 1, 2)]
        return [*pairs, layers[-1]]
    encoder: Any = model.encoder
    return [*encoder.layers, MeanHead(model.head)]  # type: ignore[arg-type]


def stage_bounds(spec: PipelineSpec, stages: int) -> list[tuple[int, int]]:
    """(first unit, end) of every stage."""
    counts = unit_params(spec.model, spec.width, spec.depth, spec.classes)
    starts = [*partition(counts, stages), len(counts)]
    return list(itertools.pairwise(starts))


def build_stage(spec: PipelineSpec, stage: int, stages: int, device: torch.device) -> nn.Module:
    """Rank `stage`'s part of the freshly seeded model."""
    units = build_units(build_model(spec.model_spec(), device), spec.model)
    first, end = stage_bounds(spec, stages)[stage]
    return nn.Sequential(*units[first:end])


class _BackwardStart(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, meter: Busy) -> torch.Tensor:
        ctx.meter = meter
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        ctx.meter.begin()
        return grad, None


class _BackwardEnd(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, anchor: torch.Tensor, meter: Busy) -> torch.Tensor:
        ctx.meter = meter
        ctx.x_grad = x.requires_grad
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor, None]:
        ctx.meter.end()
        return (grad if ctx.x_grad else None), torch.zeros(()), None


class Busy(nn.Module):
    """The stage, with the time it computes (us) and the bytes of the tensors it hands on (its
    outputs unless it is the last stage, its input gradients unless it is the first) added up as
    it runs. On CUDA, busy_us is read after a drain (the events are complete then)."""

    def __init__(self, stage: nn.Module, first: bool, last: bool, device: torch.device) -> None:
        super().__init__()
        self.stage = stage
        self.first, self.last, self.device = first, last, device
        self.anchor = torch.zeros((), requires_grad=True)  # lets stage 0's backward end be seen
        self.sent_bytes = 0
        self._busy_us = 0.0
        self._started = 0.0
        self._events: list[tuple[torch.cuda.Event, torch.cuda.Event]] = []
        self._open: torch.cuda.Event | None = None

    def begin(self) -> None:
        if self.device.type == "cuda":
            self._open = torch.cuda.Event(enable_timing=True)
            self._open.record()
        else:
            self._started = time.perf_counter()

    def end(self) -> None:
        if self.device.type == "cuda":
            stop = torch.cuda.Event(enable_timing=True)
            stop.record()
            assert self._open is not None, "end() without begin()"
            self._events.append((self._open, stop))
        else:
            self._busy_us += (time.perf_counter() - self._started) * 1e6

    @property
    def busy_us(self) -> float:
        """Busy time so far (us); on CUDA after a drain, when every recorded event is done."""
        for start, stop in self._events:
            self._busy_us += start.elapsed_time(stop) * 1e3
        self._events.clear()
        return self._busy_us

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.device.type == "meta":  # the library's shape inference: not work of a step
            return self.stage(x)
        self.begin()
        if not self.first:
            self.sent_bytes += x.numel() * x.element_size()  # its gradient goes back
        x = _BackwardEnd.apply(x, self.anchor, self)
        out = _BackwardStart.apply(self.stage(x), self)
        if not self.last:
            self.sent_bytes += out.numel() * out.element_size()
        self.end()
        return out
