"""Check data that every dtype represents exactly, so results compare bit for bit.

Rank r's element i holds (i + r) % K. K is chosen per dtype and world size so that the sum over
all ranks stays an exact integer (bf16 has 8 mantissa bits: exact up to 256; int8 up to 127).
When even K = 2 would overflow, rank r holds a one-hot pattern (1 where i % n == r) whose sum is 1.
"""

from __future__ import annotations

import torch

EXACT_LIMIT = {
    torch.float16: 2048,
    torch.bfloat16: 256,
    torch.float32: 1 << 24,
    torch.float64: 1 << 53,
    torch.int8: 127,
    torch.uint8: 255,
    torch.int32: (1 << 31) - 1,
    torch.int64: (1 << 63) - 1,
}
MAX_PERIOD = 8


def period(dtype: torch.dtype, world_size: int, op: str = "sum") -> int:
    """K for the (i + r) % K pattern; 1 means 'use the one-hot pattern'."""
    limit = EXACT_LIMIT[dtype]
    if op in ("max", "min"):
        return min(MAX_PERIOD, limit + 1)
    if op == "sum":
        return max(1, min(MAX_PERIOD, limit // world_size + 1))
    return 1  # prod and avg use their own patterns, see fill()


def positions(count: int, device: torch.device, chunk: int = 0) -> torch.Tensor:
    """Element positions 0..count-1. With `chunk`, chunk j's positions are shifted by j, so chunks
    that would otherwise hold the same values (chunk % K == 0) differ, and a reduce_scatter that
    hands a rank the wrong chunk is caught."""
    index = torch.arange(count, dtype=torch.int64, device=device)
    return index + index // chunk if chunk > 0 else index


def fill(
    count: int,
    rank: int,
    world_size: int,
    dtype: torch.dtype,
    device: torch.device,
    op: str = "sum",
    chunk: int = 0,
) -> torch.Tensor:
    """Rank `rank`'s check data for a reduction with `op`, as a new tensor (shape [count])."""
    index = positions(count, device, chunk)
    if op == "prod":
        values = torch.where(index % world_size == rank, 2, 1)  # product is 2 everywhere
    elif op == "avg":
        values = index % MAX_PERIOD  # the same on every rank: the average is the value itself
    else:
        k = period(dtype, world_size, op)
        values = (index + rank) % k if k > 1 else (index % world_size == rank).long()
    return values.to(dtype)


def expected_reduction(
    count: int, world_size: int, dtype: torch.dtype, device: torch.device, op: str, chunk: int = 0
) -> torch.Tensor:
    """The exact result of reducing every rank's fill() with `op`, as float64 (shape [count])."""
    index = positions(count, device, chunk)
    if op == "prod":
        return torch.full((count,), 2.0, dtype=torch.float64, device=device)
    if op == "avg":
        return (index % MAX_PERIOD).double()
    k = period(dtype, world_size, op)
    if k == 1:
        return torch.ones(count, dtype=torch.float64, device=device)
    # Ranks r and r + K hold the same values: K distinct contributions, each `times` often.
    result: torch.Tensor | None = None
    for j in range(min(world_size, k)):
        times = world_size // k + (1 if j < world_size % k else 0)
        values = ((index + j) % k).double()
        if op == "sum":
            result = values * times if result is None else result + values * times
        elif op == "max":
            result = values if result is None else torch.maximum(result, values)
        else:
            result = values if result is None else torch.minimum(result, values)
    assert result is not None
    return result


def count_wrong(actual: torch.Tensor, expected: torch.Tensor, op: str = "sum") -> int:
    """Elements that differ. Bit-exact, except avg, whose division by n may round: 4 ulp."""
    actual64 = actual.double()
    if op == "avg" and actual.dtype.is_floating_point:
        tolerance = 4 * torch.finfo(actual.dtype).eps * expected.abs().clamp(min=1)
        return int(((actual64 - expected).abs() > tolerance).sum().item())
    return int((actual64 != expected).sum().item())


# Data-moving primitives (broadcast, all_gather, all_to_all, send/recv) add nothing up, so their
# check data can use every integer the dtype holds exactly: values that differ from rank to rank
# and from element to element show a misplaced chunk as well as a corrupted one.
MOVE_PERIOD_CAP = 1 << 16


def move_period(dtype: torch.dtype) -> int:
    """K for the (i + offset) % K pattern of data that is moved, not reduced: 0..K-1 are exact."""
    return min(EXACT_LIMIT[dtype] + 1, MOVE_PERIOD_CAP)


def expected_pattern(
    count: int, offset: int, dtype: torch.dtype, device: torch.device
) -> torch.Tensor:
    """(i + offset) % K for i in 0..count-1, as float64 (shape [count])."""
    index = torch.arange(count, dtype=torch.int64, device=device)
    return ((index + offset) % move_period(dtype)).double()


def fill_pattern(count: int, offset: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """expected_pattern() in `dtype`, as a new tensor (shape [count])."""
    index = torch.arange(count, dtype=torch.int64, device=device)
    return ((index + offset) % move_period(dtype)).to(dtype)
