"""FSDP2 strategies of `distbench ddp`: `fully_shard` on each block, then on the root.

fsdp:               each block reshards after forward and is all-gathered again in backward.
fsdp-reshard-false: each block keeps its unsharded parameters from forward to backward (one
                    all-gather per step, more memory): the memory/communication trade.

Blocks are the MLP's Linear layers and the transformer's encoder layers. The root (the
transformer's head; the MLP's root holds no parameters of its own) never reshards after forward,
as FSDP2 does by default: backward needs it at once. Same model, data and plain SGD as the other
strategies; the step's communication happens inside forward and backward.

Bytes per step (docs/measurement.md) are computed from the parameter shapes and the world size,
in nccl-tests' size convention (the unsharded tensor: all_gather's output, reduce_scatter's
input). FSDP2 shards every parameter on dim 0, padded to a multiple of the world size, and moves
the padded size.
"""

from __future__ import annotations

import math

import torch
import torch.distributed as dist
from torch import nn

from distbench.primitives.base import Context

RESHARD_AFTER_FORWARD = {"fsdp": True, "fsdp-reshard-false": False}
"""FSDP strategy -> reshard_after_forward of its blocks."""


def blocks(model: nn.Module) -> list[nn.Module]:
    """The modules sharded one by one: the transformer's encoder layers, the MLP's Linears."""
    encoder = getattr(model, "encoder", None)
    if isinstance(encoder, nn.TransformerEncoder):
        return list(encoder.layers)
    return [m for m in model.modules() if isinstance(m, nn.Linear)]


def shard_model(model: nn.Module, ctx: Context, strategy: str) -> nn.Module:
    """fully_shard every block, then the root, over ctx.group (in place; returns the model).
    FSDP is imported here, not at the top: it pulls DTensor and sympy (~1 CPU-s), which the row
    builders and the ranks of every other strategy that import this module never use."""
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.fsdp import fully_shard

    group = ctx.group if ctx.group is not None else dist.group.WORLD
    assert group is not None, "the process group is initialised before a strategy is built"
    mesh = DeviceMesh.from_group(group, ctx.device.type)
    reshard = RESHARD_AFTER_FORWARD[strategy]
    for block in blocks(model):
        fully_shard(block, mesh=mesh, reshard_after_forward=reshard)
    fully_shard(model, mesh=mesh, reshard_after_forward=False)
    return model


def full_param(param: torch.Tensor) -> torch.Tensor:
    """The whole parameter: a sharded one is all-gathered (a collective: every rank calls it)."""
    from torch.distributed.tensor import DTensor

    if isinstance(param, DTensor):
        return param.full_tensor().detach()
    return param.detach()


def padded_numel(param: torch.Tensor, world_size: int) -> int:
    """Elements FSDP2 moves for `param`: dim 0 padded up to a multiple of the world size."""
    if param.dim() == 0:
        return world_size
    rows = math.ceil(param.shape[0] / world_size) * world_size
    return rows * math.prod(param.shape[1:])


def bytes_per_step(model: nn.Module, strategy: str, world_size: int) -> tuple[int, int]:
    """(all-gathered, reduce-scattered) bytes per step of the unsharded `model` under `strategy`:
    forward all-gathers every parameter once, backward all-gathers the blocks again when they
    reshard after forward, and reduce-scatters every gradient once. (0, 0) for other strategies."""
    if strategy not in RESHARD_AFTER_FORWARD:
        return 0, 0
    in_blocks = {id(p) for block in blocks(model) for p in block.parameters()}
    block_bytes = root_bytes = 0
    for param in model.parameters():
        size = padded_numel(param, world_size) * param.element_size()
        if id(param) in in_blocks:
            block_bytes += size
        else:
            root_bytes += size
    gathers = 2 if RESHARD_AFTER_FORWARD[strategy] else 1
    return gathers * block_bytes + root_bytes, block_bytes + root_bytes
