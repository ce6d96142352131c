"""Check data that makes every wrong result visible and every right one bit-exact (nccl-tests -c).

Each value is a pseudo-random integer drawn per (rank, element), as nccl-tests draws its data:
a 32-bit hash of the element's position (`mix`) combined with the rank's key (`draw`). No two
ranks hold the same data, neighbouring elements are unrelated, and nothing repeats within 2**32
elements, so a result that is rotated by any number of elements, handed to the wrong rank or
taken from the wrong chunk differs at almost every element. Draws are scaled into ranges chosen
per dtype and world size n so that every partial result stays an exact integer. L =
`limit(dtype)`: every integer 0..L is exact (bf16 256, fp16 2048, int8 127, fp32 2**24, ...);
u(m) below is a draw in 0..m-1.

- sum: 1 + u(L // n), the dtype's exact range divided by n: the sum is n..L. Where L // n < 2
  (int8 n >= 64, bf16 n >= 129): 1 on a window of c(i) ranks and 0 elsewhere, c(i) drawn per
  element in 1..min(n, L), so the sum is c(i).
- max, min (the same data): 1 + u(L), the whole exact range, as nothing accumulates.
- prod: 1, except on a window of c(i) ranks (2 <= c(i) <= C, 3**C <= L) that hold 2 or 3 each.
  The product (4..3**C) exceeds the max (<= 3) and every rank's own data, and varies per element.
- avg: base(i) + 1 and base(i) - 1 on k(i) pairs of ranks, base(i) elsewhere: the sum is
  n * base(i), so the average is the integer base(i) (1..B, either sign for signed dtypes), exact
  where the backend sums then divides, while every rank's data differ. B keeps n * B + n // 2
  exact and, for floats, the average below L / (4(n + 2)) where that leaves 4 values or more, so
  that NCCL's pre-multiplied average stays within a quarter of the integer (`tolerance`).
- moved data (broadcast, all_gather, all_to_all, send/recv): 1 + u(L), keyed by the sending rank
  and the position in its send buffer, so each (sender, receiver, offset) differs.

Every expected value is nonzero, so a zeroed result is wrong at every element, for every op (the
exception: avg where even B = 1 is not exact, n > 2L / 3, whose average is 0). Receive buffers
start as `sentinel(dtype)`, a value no expected result takes, so an element never written is
wrong. Expected results come from reducing every rank's data here, in int64 (exact), block by
block (`BLOCK`), so that a check needs little extra memory.
"""

from __future__ import annotations

import functools

import torch

EXACT_LIMIT = {
    torch.float16: 2048,
    torch.bfloat16: 256,
    torch.float32: 1 << 24,
    torch.float64: 1 << 53,
    torch.int8: 127,
    torch.uint8: 254,  # 255 is the sentinel
    torch.int32: (1 << 31) - 1,
    torch.int64: (1 << 63) - 1,
}
"""The largest L such that every integer 0..L is exact in the dtype (and is not the sentinel)."""
MASK = (1 << 32) - 1
BLOCK = {"cpu": 1 << 16, "cuda": 1 << 24}
"""Elements generated and compared at once, per device type: on a CPU small enough that the
temporaries stay in cache (3x faster than large blocks), on a GPU large enough that kernel
launches do not dominate. Bounds the check's extra memory either way."""


def block_size(device: torch.device) -> int:
    return BLOCK.get(device.type, BLOCK["cuda"])


SALT = {"sum": 1, "max": 2, "prod": 3, "avg": 4, "move": 5, "start": 6, "width": 7, "sign": 8}
"""Independent draws per purpose (min uses max's: the same data)."""


def limit(dtype: torch.dtype) -> int:
    """L: values 0..L are exact in `dtype`; capped at 2**31 so that draw() stays within int64."""
    return min(EXACT_LIMIT[dtype], 1 << 31)


def sentinel(dtype: torch.dtype) -> float:
    """The value receive buffers start with, which no expected result equals: 0.5 for floats
    (every result is an integer), the most negative value for signed integers (results stay
    within -L..L), 255 for uint8 (results stay within 0..254)."""
    if dtype.is_floating_point:
        return 0.5
    return float(torch.iinfo(dtype).min if dtype.is_signed else torch.iinfo(dtype).max)


def fill_sentinel(count: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A receive buffer that is wrong at every element until the collective writes it ([count])."""
    return torch.full((count,), sentinel(dtype), dtype=dtype, device=device)


def mix(x: torch.Tensor) -> torch.Tensor:
    """A bijective 32-bit integer hash (two xor-shift-multiply rounds, constants from Wellons'
    hash prospector); int64 in, [0, 2**32) out. Every product stays below 2**63: exact on every
    device, with no reliance on integer overflow."""
    x = x & MASK
    x = x ^ (x >> 16)
    x = (x * 0x21F0AAAD) & MASK
    x = x ^ (x >> 15)
    x = (x * 0x735A2D97) & MASK
    return x ^ (x >> 15)


@functools.cache
def key_hash(key: int, salt: int) -> int:
    """The 32-bit key of per-element draws (key = -1) or of one rank, for one purpose."""
    return int(mix(torch.tensor((key + 1) * 64 + salt, dtype=torch.int64)).item())


def draw(
    hashed_index: torch.Tensor, key: int | torch.Tensor, salt: int, modulus: int
) -> torch.Tensor:
    """Pseudo-random integers in [0, modulus), one per element, independent across keys. `key`
    may be a column of ranks ([R, 1]): then one row of draws per rank ([R, count])."""
    keyed = key_hash(key, salt) if isinstance(key, int) else mix((key + 1) * 64 + salt)
    spread = ((hashed_index ^ keyed) * 0x2C1B3C6D) & MASK  # one multiply: cheap per rank
    return (spread * modulus) >> 32  # the top bits scaled to [0, modulus), without a division


def hashed_positions(count: int, start: int, device: torch.device) -> torch.Tensor:
    """mix(position) for positions start .. start+count-1 (int64, [count])."""
    return mix(torch.arange(start, start + count, dtype=torch.int64, device=device))


def window(
    hashed: torch.Tensor, ranks: torch.Tensor, world_size: int, lowest: int, highest: int, salt: int
) -> torch.Tensor:
    """Whether each rank is among c(i) consecutive ranks (mod n) from a start s(i), with c(i)
    drawn per element in lowest..highest (bool, [R, count])."""
    start = draw(hashed, -1, SALT["start"] + 16 * salt, world_size)
    width = lowest + draw(hashed, -1, SALT["width"] + 16 * salt, highest - lowest + 1)
    return cyclic(ranks - start, world_size) < width


def cyclic(difference: torch.Tensor, world_size: int) -> torch.Tensor:
    """difference mod n for differences in -n..n-1, without a division."""
    return difference + world_size * (difference < 0)


def prod_width(dtype: torch.dtype, world_size: int) -> int:
    """C: the most ranks that may hold a 3 at one element so that 3**C stays exact."""
    width = 0
    while 3 ** (width + 1) <= limit(dtype):
        width += 1
    return min(world_size, width)


def avg_base(dtype: torch.dtype, world_size: int) -> int:
    """How many values base(i) takes: n * base + n // 2 must stay exact; for floats, the average
    is kept below L / (4(n + 2)) where that leaves 4 values or more, so that the rounding bound
    of a pre-multiplied average (NCCL) stays under 1/4 and a result off by one is caught."""
    exact = (limit(dtype) - world_size // 2) // world_size
    if not dtype.is_floating_point:
        return exact
    return max(min(exact, limit(dtype) // (4 * (world_size + 2))), min(exact, 4))


def reduction_values(
    hashed: torch.Tensor, ranks: torch.Tensor, world_size: int, dtype: torch.dtype, op: str
) -> torch.Tensor:
    """The check data for `op` of each rank in `ranks` ([R, 1]) at the positions whose hashes
    are `hashed` ([count]): int64, [R, count]."""
    top, n = limit(dtype), world_size
    if op in ("max", "min"):
        return 1 + draw(hashed, ranks, SALT["max"], top)
    if op == "sum":
        if top // n >= 2:
            return 1 + draw(hashed, ranks, SALT["sum"], top // n)
        return window(hashed, ranks, n, 1, min(n, top), SALT["sum"]).long()
    if op == "prod":
        most = prod_width(dtype, n)
        active = window(hashed, ranks, n, min(2, most), most, SALT["prod"])
        return torch.where(active, 2 + draw(hashed, ranks, SALT["prod"], 2), 1)
    if op == "avg":
        span = avg_base(dtype, n)
        base = torch.zeros_like(hashed)
        if span >= 1:
            base = 1 + draw(hashed, -1, SALT["avg"], span)
            if dtype.is_signed:  # negative averages too: twice the values in the same range
                base = torch.where(draw(hashed, -1, SALT["sign"], 2) == 1, -base, base)
        if n < 2 or (span < 1 and not dtype.is_signed):
            return base.expand(len(ranks), -1)
        # k(i) pairs of consecutive ranks from s(i) hold +1 and -1: the sum stays n * base(i).
        pairs = 1 + draw(hashed, -1, SALT["width"] + 16 * SALT["avg"], n // 2)
        step = cyclic(ranks - draw(hashed, -1, SALT["start"] + 16 * SALT["avg"], n), n)
        return base + torch.where(step < 2 * pairs, 1 - 2 * (step & 1), 0)
    raise ValueError(f"no check data for op {op!r}")


def fill(
    count: int,
    rank: int,
    world_size: int,
    dtype: torch.dtype,
    device: torch.device,
    op: str = "sum",
    start: int = 0,
) -> torch.Tensor:
    """Rank `rank`'s check data for a reduction with `op`, as a new tensor ([count])."""
    out = torch.empty(count, dtype=dtype, device=device)
    block = block_size(device)
    for begin in range(0, count, block):
        size = min(block, count - begin)
        hashed = hashed_positions(size, start + begin, device)
        ranks = torch.tensor([[rank]], device=device)
        out[begin : begin + size] = reduction_values(hashed, ranks, world_size, dtype, op)[0]
    return out


def expected_reduction(
    count: int,
    world_size: int,
    dtype: torch.dtype,
    device: torch.device,
    op: str,
    start: int = 0,
) -> torch.Tensor:
    """The exact reduction with `op` of every rank's fill() at positions start.. (float64).
    All ranks at once ([n, step] values), in steps that keep that to about one block."""
    ranks = torch.arange(world_size, device=device).view(-1, 1)
    step = max(1, block_size(device) // world_size)
    parts = []
    for begin in range(0, count, step):
        hashed = hashed_positions(min(step, count - begin), start + begin, device)
        data = reduction_values(hashed, ranks, world_size, dtype, op)  # [n, step]
        if op == "sum":
            parts.append(data.sum(0))
        elif op == "avg":  # exact: n divides the sum
            parts.append(torch.div(data.sum(0), world_size, rounding_mode="floor"))
        elif op == "prod":
            parts.append(data.prod(0))
        else:
            parts.append(data.amax(0) if op == "max" else data.amin(0))
    if not parts:
        return torch.zeros(0, dtype=torch.float64, device=device)
    return torch.cat(parts).double()


def tolerance(
    expected: torch.Tensor, dtype: torch.dtype, op: str, world_size: int
) -> torch.Tensor | float:
    """0 (bit-exact), except a float avg: NCCL pre-multiplies each value by 1/n, rounding, then
    sums; (n + 2) half-ulps of the result bounds that."""
    if op != "avg" or not dtype.is_floating_point:
        return 0.0
    return (world_size + 2) * torch.finfo(dtype).eps / 2 * expected.abs().clamp(min=1)


def count_wrong(
    actual: torch.Tensor, expected: torch.Tensor, op: str = "sum", world_size: int = 1
) -> int:
    """Elements of `actual` that differ from `expected` (beyond tolerance()); NaN is wrong."""
    error = (actual.double() - expected).abs()
    return int((~(error <= tolerance(expected, actual.dtype, op, world_size))).sum().item())


def wrong_reduced(actual: torch.Tensor, world_size: int, op: str, start: int = 0) -> int:
    """Wrong elements of `actual`, which should hold positions start.. of the reduction with `op`
    of every rank's fill(); compared block by block."""
    wrong = 0
    block = block_size(actual.device)
    for begin in range(0, actual.numel(), block):
        part = actual[begin : begin + block]
        expected = expected_reduction(
            part.numel(), world_size, actual.dtype, actual.device, op, start + begin
        )
        wrong += count_wrong(part, expected, op, world_size)
    return wrong


def expected_pattern(
    count: int, source: int, dtype: torch.dtype, device: torch.device, start: int = 0
) -> torch.Tensor:
    """Rank `source`'s data to be moved, positions start.. of its buffer (float64, [count])."""
    hashed = hashed_positions(count, start, device)
    return (1 + draw(hashed, source, SALT["move"], limit(dtype))).double()


def fill_pattern(
    count: int, source: int, dtype: torch.dtype, device: torch.device, start: int = 0
) -> torch.Tensor:
    """expected_pattern() in `dtype`, as a new tensor ([count])."""
    out = torch.empty(count, dtype=dtype, device=device)
    block = block_size(device)
    for begin in range(0, count, block):
        size = min(block, count - begin)
        out[begin : begin + size] = expected_pattern(size, source, dtype, device, start + begin)
    return out


def wrong_moved(actual: torch.Tensor, source: int, start: int = 0) -> int:
    """Wrong elements of `actual`, which should hold positions start.. of `source`'s data."""
    wrong = 0
    block = block_size(actual.device)
    for begin in range(0, actual.numel(), block):
        part = actual[begin : begin + block]
        expected = expected_pattern(part.numel(), source, part.dtype, part.device, start + begin)
        wrong += count_wrong(part, expected)
    return wrong
