"""One training step of the pipelined model per strategy (optimizer outside): every rank calls
`step(x, y)` with the whole global batch (only the first stage reads x, only the last y).

sendrecv is GPipe by hand, the reference: all M forwards (receive the activation from stage
s - 1, compute, isend it to s + 1), then all M backwards in the same order (receive the output's
gradient from s + 1, backward, isend the input's gradient to s - 1). Each microbatch's loss is
its cross-entropy mean / M, so the gradients equal the global batch's mean loss's. The library
strategies run torch.distributed.pipelining's PipelineStage under ScheduleGPipe or Schedule1F1B,
whose loss is the same mean per microbatch with the gradients scaled by 1/M (scale_grads).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.distributed as dist
from torch import nn

from distbench.primitives.base import Context

Step = Callable[[torch.Tensor, torch.Tensor], None]


def wait(work: dist.Work | None) -> None:
    """Wait for a point-to-point operation (None: nothing was posted)."""
    if work is not None:
        work.wait()


def activation_shape(x: torch.Tensor, microbatches: int, width: int) -> tuple[int, ...]:
    """What crosses every stage boundary per microbatch: [mb, width] or [mb, seq, width]."""
    return (x.shape[0] // microbatches, *x.shape[1:-1], width)


def sendrecv_step(stage: nn.Module, ctx: Context, microbatches: int, width: int) -> Step:
    s, last = ctx.rank, ctx.world_size - 1
    peer = ctx.global_ranks  # group rank -> global rank (isend/irecv take global ranks)
    loss_fn = nn.CrossEntropyLoss()

    def step(x: torch.Tensor, y: torch.Tensor) -> None:
        shape = activation_shape(x, microbatches, width)
        inputs: list[torch.Tensor] = []
        outputs: list[torch.Tensor] = []
        sends: list[dist.Work | None] = []
        for m, (xm, ym) in enumerate(
            zip(x.chunk(microbatches), y.chunk(microbatches), strict=True)
        ):
            if s == 0:
                inp = xm
            else:
                inp = torch.empty(shape, dtype=x.dtype, device=x.device)
                wait(dist.irecv(inp, peer[s - 1], group=ctx.group, tag=m))
                inp.requires_grad_()
            out = stage(inp)
            if s < last:
                sends.append(dist.isend(out.detach(), peer[s + 1], group=ctx.group, tag=m))
            else:
                out = loss_fn(out, ym) / microbatches
            inputs.append(inp)
            outputs.append(out)
        for m, (inp, out) in enumerate(zip(inputs, outputs, strict=True)):
            if s == last:
                out.backward()
            else:
                grad = torch.empty_like(out)
                wait(dist.irecv(grad, peer[s + 1], group=ctx.group, tag=m))
                out.backward(grad)
            if s > 0:
                assert inp.grad is not None
                sends.append(dist.isend(inp.grad, peer[s - 1], group=ctx.group, tag=m))
        for work in sends:
            wait(work)

    return step


def library_step(
    strategy: str, stage: nn.Module, ctx: Context, microbatches: int
) -> tuple[Step, object]:
    """The schedule's step, and the schedule (kept alive with the stage)."""
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

    pipe = PipelineStage(stage, ctx.rank, ctx.world_size, ctx.device, group=ctx.group)
    kind = ScheduleGPipe if strategy == "pipelining" else Schedule1F1B
    schedule = kind(pipe, n_microbatches=microbatches, loss_fn=nn.CrossEntropyLoss())
    s, last = ctx.rank, ctx.world_size - 1

    def step(x: torch.Tensor, y: torch.Tensor) -> None:
        if s == 0:
            schedule.step(x)
        elif s == last:
            schedule.step(target=y)
        else:
            schedule.step()

    return step, schedule


def build_step(
    strategy: str, stage: nn.Module, ctx: Context, microbatches: int, width: int
) -> tuple[Step, object]:
    if strategy == "sendrecv":
        return sendrecv_step(stage, ctx, microbatches, width), None
    return library_step(strategy, stage, ctx, microbatches)
