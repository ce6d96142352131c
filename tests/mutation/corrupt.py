"""Test-only corruption of the real collectives, to prove that `--check` sees every wrong result.

`corrupted(primitive, mutation, ctx)` replaces, for the duration of a `with` block, the function
through which a primitive calls its collective (torch.distributed's, or the module-level alias
that all_gather and reduce_scatter hold) by a wrapper that runs the REAL collective and then
damages its result on every rank, or does something else instead:

- rotate1, rotate8: the result rotated by 1 or 8 elements;
- swap: chunks 0 and 1 swapped (reduce_scatter: of the input, so ranks 0 and 1 get each other's;
  all_to_allv: the segments from senders 0 and 1);
- skip: the collective is not called at all;
- zero: the result zeroed;
- lose1: the last element never delivered (it keeps what the buffer held before the call);
  not for all_reduce and reduce, whose in-place buffer held this rank's own data, which may be
  the right result at one element (min, max);
- other:<op> (reducing primitives): the collective runs with another reduction op;
- other (data movers): another collective runs (broadcast from the next root, an all_reduce in
  place of all_gather, an all_gather in place of all_to_all, all_to_allv's splits taken from the
  reversed send buffer, gather to the next root).

gather's result is the root's list of chunks (gather_list): the mutations act on them joined.

Nothing here is mocked: every collective that runs is gloo's. This module lives under tests/ only
and is reachable from no option of the product.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch.distributed as dist

from distbench.primitives import all_gather, reduce_scatter
from distbench.primitives.base import REDUCE_OPS, Context

Call = Callable[..., Any]
REDUCING = ("all_reduce", "reduce", "reduce_scatter")
IN_PLACE_REDUCING = ("all_reduce", "reduce")
BASIC = ("rotate1", "rotate8", "swap", "skip", "zero")
TARGETS: dict[str, list[tuple[Any, str]]] = {
    "all_reduce": [(dist, "all_reduce")],
    "broadcast": [(dist, "broadcast")],
    "reduce": [(dist, "reduce")],
    "all_gather": [(all_gather, "ALL_GATHER")],
    "reduce_scatter": [(reduce_scatter, "REDUCE_SCATTER")],
    "all_to_all": [(dist, "all_to_all_single")],
    "send_recv": [(dist, "send"), (dist, "recv"), (dist, "batch_isend_irecv")],
    "all_to_allv": [(dist, "all_to_all_single")],
    "gather": [(dist, "gather")],
}
"""Where each primitive's check calls its collective: (owner, attribute) patched while corrupted."""


def mutations(primitive: str, op: str, ops: tuple[str, ...]) -> list[str]:
    """Every mutation that applies to `primitive` reduced with `op` (ops: those to substitute)."""
    lose = [] if primitive in IN_PLACE_REDUCING else ["lose1"]
    if primitive in REDUCING:
        return [*BASIC, *lose, *(f"other:{other}" for other in ops if other != op)]
    if primitive == "send_recv":
        return [*BASIC, *lose]  # point-to-point has no other collective of the same shape
    return [*BASIC, *lose, "other"]


def damage(tensor: torch.Tensor, mutation: str, world_size: int, last: torch.Tensor) -> None:
    """Corrupt a result in place (the mutations that act after the real collective); `last` is
    the buffer's last element as it was before the call."""
    if mutation == "lose1":
        tensor[-1:].copy_(last)
    elif mutation.startswith("rotate"):
        tensor.copy_(tensor.roll(int(mutation.removeprefix("rotate"))))
    elif mutation == "zero":
        tensor.zero_()
    elif mutation == "swap":
        swap_chunks(tensor, world_size)


def swap_chunks(tensor: torch.Tensor, parts: int) -> None:
    """Chunks 0 and 1 of `parts` equal chunks trade places (halves when parts < 2)."""
    chunks = tensor.view(max(2, parts), -1)
    first = chunks[0].clone()
    chunks[0].copy_(chunks[1])
    chunks[1].copy_(first)


def swap_segments(tensor: torch.Tensor, sizes: list[int]) -> None:
    """Segments 0 and 1 (of `sizes`, which may differ) trade places."""
    first, second = sizes[0], sizes[1]
    head = tensor[: first + second].clone()
    tensor[:second].copy_(head[first:])
    tensor[second : first + second].copy_(head[:first])


def substitute(primitive: str, real: Call, ctx: Context, args: tuple, kwargs: dict) -> Any:
    """Run another collective in the place of the real one ('other')."""
    out = args[0]
    if primitive == "broadcast":
        return real(out, src=(kwargs["src"] + 1) % ctx.world_size, group=kwargs.get("group"))
    if primitive == "all_gather":
        out.view(ctx.world_size, -1).copy_(args[1].expand(ctx.world_size, -1))
        return dist.all_reduce(out, group=kwargs.get("group"))  # every chunk: the sum of all
    if primitive == "all_to_all":
        own = args[1].view(ctx.world_size, -1)[ctx.rank]  # every rank sends its own chunk to all
        return all_gather.ALL_GATHER(out, own.contiguous(), group=kwargs.get("group"))
    if primitive == "all_to_allv":  # the splits taken from the wrong end of each send buffer
        return real(out, args[1].flip(0), *args[2:], **kwargs)
    raise ValueError(f"no substitute collective for {primitive}")


def gather_to_next_root(real: Call, ctx: Context, tensor: torch.Tensor, kwargs: dict) -> Any:
    """gather to the rank after the real root (which then keeps its sentinel)."""
    group = kwargs.get("group") or dist.group.WORLD
    after = (dist.get_group_rank(group, kwargs["dst"]) + 1) % ctx.world_size
    chunks = [torch.empty_like(tensor) for _ in range(ctx.world_size)]
    into = chunks if ctx.rank == after else None
    return real(tensor, gather_list=into, dst=dist.get_global_rank(group, after), group=group)


def wrap_gather(real: Call, mutation: str, ctx: Context) -> Call:
    """The corrupting stand-in for torch.distributed.gather (the root's chunks, joined)."""

    def gather(tensor: torch.Tensor, **kwargs: Any) -> Any:
        if mutation == "skip":
            return None
        if mutation == "other":
            return gather_to_next_root(real, ctx, tensor, kwargs)
        chunks = kwargs.get("gather_list")
        last = chunks[-1][-1:].clone() if chunks else None
        result = real(tensor, **kwargs)
        if chunks:
            joined = torch.cat(chunks)
            damage(joined, mutation, ctx.world_size, last if last is not None else joined[-1:])
            for chunk, part in zip(chunks, joined.split(len(chunks[0])), strict=True):
                chunk.copy_(part)
        return result

    return gather


def wrap(primitive: str, name: str, real: Call, mutation: str, ctx: Context) -> Call:
    """The corrupting stand-in for `real` (torch.distributed.<name> or a primitive's alias)."""
    n = ctx.world_size

    def p2p(*args: Any, **kwargs: Any) -> Any:
        if mutation == "skip":
            return [] if name == "batch_isend_irecv" else None
        received = [args[0]] if name == "recv" else []
        if name == "batch_isend_irecv":
            received = [op.tensor for op in args[0] if op.op.__name__ == "irecv"]
        before = [tensor[-1:].clone() for tensor in received]
        result = real(*args, **kwargs)
        for work in result if name == "batch_isend_irecv" else []:
            work.wait()
        for tensor, last in zip(received, before, strict=True):
            damage(tensor, mutation, 2, last)
        return [] if name == "batch_isend_irecv" else result  # completed above

    def collective(*args: Any, **kwargs: Any) -> Any:
        if mutation == "skip":
            return None
        if mutation.startswith("other:"):
            return real(*args, **{**kwargs, "op": REDUCE_OPS[mutation.removeprefix("other:")]})
        if mutation == "other":
            return substitute(primitive, real, ctx, args, kwargs)
        if mutation == "swap" and primitive == "reduce_scatter":
            swap_chunks(args[1], n)  # the input: rank 0 is handed rank 1's chunk
            return real(*args, **kwargs)
        if mutation == "swap" and primitive == "all_to_allv":
            result = real(*args, **kwargs)
            swap_segments(args[0], args[2])  # what senders 0 and 1 sent change places
            return result
        last = args[0][-1:].clone()
        result = real(*args, **kwargs)
        damage(args[0], mutation, n, last)
        return result

    if primitive == "gather":
        return wrap_gather(real, mutation, ctx)
    return p2p if primitive == "send_recv" else collective


@contextlib.contextmanager
def corrupted(primitive: str, mutation: str, ctx: Context) -> Iterator[None]:
    """Inside the block, `primitive`'s collective is the real one plus `mutation`."""
    saved = [(owner, name, getattr(owner, name)) for owner, name in TARGETS[primitive]]
    try:
        for owner, name, real in saved:
            setattr(owner, name, wrap(primitive, name, real, mutation, ctx))
        yield
    finally:
        for owner, name, real in saved:
            setattr(owner, name, real)
