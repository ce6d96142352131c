"""How gradients (or parameters) are made equal across ranks: DDP and its hooks, or by hand.

Every strategy wraps one freshly built model and adds its communication to a plain training step:

    loss = loss_fn(strategy.module(x), y); loss.backward()
    strategy.after_backward()        # grad-avg, grad-avg-flat: all_reduce the gradients
    optimizer.step()
    strategy.after_step(step)        # param-avg: all_reduce the parameters every K steps

DDP strategies do their communication inside backward (bucketed, overlapped with it), except
ddp-nooverlap, whose bucket all_reduces block backward: ddp's messages with nothing hidden.
fsdp and fsdp-reshard-false (ddp/fsdp.py) all-gather and reduce-scatter inside forward/backward.
local is the plain step with no communication at all (each rank trains its own copy): the
compute baseline of the manual strategies and FSDP (spec.COMM_BASELINE).
"""

# No `from __future__ import annotations` here: DDP checks a comm hook's annotations against the
# real types (dist.GradBucket, Future[Tensor]) and refuses the strings that import would leave.

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel

from distbench.ddp.fsdp import RESHARD_AFTER_FORWARD, shard_model
from distbench.ddp.spec import DDP_STRATEGIES, DdpSpec, StrategyRun
from distbench.primitives.base import Context


def noop_hook(state: object, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """DDP comm hook that communicates nothing: the bucket comes back as it is (each rank keeps
    its own, un-averaged gradients). DDP's step minus its communication: the compute baseline."""
    future: torch.futures.Future[torch.Tensor] = torch.futures.Future()
    future.set_result(bucket.buffer())
    return future


def bf16_compress_cpu_build_hook(
    process_group: dist.ProcessGroup, bucket: dist.GradBucket
) -> torch.futures.Future[torch.Tensor]:
    """torch's bf16_compress_hook itself, under another name. DDP refuses that hook by name on a
    torch build without CUDA (its check is for NCCL >= 2.10), although gloo reduces bfloat16."""
    return default_hooks.bf16_compress_hook(process_group, bucket)


def bf16_hook() -> Callable[..., torch.futures.Future[torch.Tensor]]:
    cuda_build = torch.version.cuda is not None or torch.version.hip is not None
    return default_hooks.bf16_compress_hook if cuda_build else bf16_compress_cpu_build_hook


def blocking_allreduce_hook(
    process_group: dist.ProcessGroup, bucket: dist.GradBucket
) -> torch.futures.Future[torch.Tensor]:
    """DDP's bucket all_reduce (divide by n, then sum, as DDP's own), called synchronously: on
    CPU backward waits for it on the host; on CUDA the compute stream waits for it. The same
    messages as ddp in the same order, none overlapped with compute."""
    buffer = bucket.buffer()
    buffer.div_(dist.get_world_size(process_group))
    dist.all_reduce(buffer, group=process_group)
    future: torch.futures.Future[torch.Tensor] = torch.futures.Future()
    future.set_result(buffer)
    return future


HOOKS: dict[str, Callable[[], Callable[..., torch.futures.Future[torch.Tensor]]]] = {
    "ddp-nocomm": lambda: noop_hook,
    "ddp-nooverlap": lambda: blocking_allreduce_hook,
    "ddp-bf16": bf16_hook,
    "ddp-fp16": lambda: default_hooks.fp16_compress_hook,
}
"""Strategy -> its DDP communication hook (ddp: none, DDP's built-in allreduce)."""


@dataclass
class Strategy:
    """One strategy bound to one model on one rank."""

    name: str
    module: nn.Module
    """What the training step calls: the DDP wrapper, or the model itself."""
    model: nn.Module
    ctx: Context
    avg_every: int = 1

    def after_backward(self) -> None:
        if self.name == "grad-avg":
            for param in self.model.parameters():
                if param.grad is not None:
                    dist.all_reduce(param.grad, group=self.ctx.group)
                    param.grad.div_(self.ctx.world_size)
        elif self.name == "grad-avg-flat":
            grads = [p.grad for p in self.model.parameters() if p.grad is not None]
            flat = torch.cat([g.reshape(-1) for g in grads])  # [total parameters]
            dist.all_reduce(flat, group=self.ctx.group)
            flat.div_(self.ctx.world_size)
            offset = 0
            for grad in grads:
                grad.copy_(flat[offset : offset + grad.numel()].view_as(grad))
                offset += grad.numel()

    def after_step(self, step: int) -> None:
        """`step` counts optimizer steps from 0; param-avg averages after steps K-1, 2K-1, ..."""
        if self.name == "param-avg" and (step + 1) % self.avg_every == 0:
            with torch.no_grad():
                for param in self.model.parameters():
                    dist.all_reduce(param, group=self.ctx.group)
                    param.div_(self.ctx.world_size)


def build_strategy(run: StrategyRun, model: nn.Module, ctx: Context, spec: DdpSpec) -> Strategy:
    """Wrap `model` for `run`: DDP (with its hook) or the model itself for manual strategies."""
    module: nn.Module = model
    if run.strategy == "dp":  # one process (world size 1) drives every local GPU
        module = nn.DataParallel(model, device_ids=list(range(torch.cuda.device_count())))
        return Strategy(run.strategy, module, model, ctx, spec.avg_every)
    if run.strategy in DDP_STRATEGIES:
        ddp = DistributedDataParallel(
            model,
            device_ids=[ctx.device.index or 0] if ctx.device.type == "cuda" else None,
            process_group=ctx.group,
            bucket_cap_mb=run.bucket_mb,
            gradient_as_bucket_view=spec.gradient_as_bucket_view,
            static_graph=spec.static_graph,
        )
        if run.strategy in HOOKS:
            ddp.register_comm_hook(ctx.group, HOOKS[run.strategy]())
        module = ddp
    elif run.strategy in RESHARD_AFTER_FORWARD:
        module = shard_model(model, ctx, run.strategy)  # FSDP2: the model itself, sharded
    return Strategy(run.strategy, module, model, ctx, spec.avg_every)


def comm_bytes_per_step(strategy: str, params: int, avg_every: int, itemsize: int = 4) -> int:
    """Bytes each rank hands to all_reduce per step: the gradients (half-size for the bf16/fp16
    hooks), nothing for ddp-nocomm and local, the parameters every K-th step for param-avg
    (per-step mean, rounded to whole bytes)."""
    if strategy in ("ddp-nocomm", "local"):
        return 0
    if strategy in ("ddp-bf16", "ddp-fp16"):
        return params * 2
    if strategy == "param-avg":
        return round(params * itemsize / avg_every)
    return params * itemsize
