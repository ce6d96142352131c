"""The check data is exact for every dtype, and the expected results are right (no group needed:
the reduction of every rank's fill() is computed here directly)."""

from __future__ import annotations

import pytest
import torch

from distbench.primitives import checkdata

CPU = torch.device("cpu")
DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int8,
    torch.uint8,
    torch.int32,
    torch.int64,
]


def reduce_directly(count: int, n: int, dtype: torch.dtype, op: str) -> torch.Tensor:
    stacked = torch.stack([checkdata.fill(count, r, n, dtype, CPU, op).double() for r in range(n)])
    if op == "sum":
        return stacked.sum(0)
    if op == "prod":
        return stacked.prod(0)
    if op == "max":
        return stacked.max(0).values
    if op == "min":
        return stacked.min(0).values
    return stacked.mean(0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 3, 8, 100, 300])
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
def test_expected_matches_direct_reduction(dtype: torch.dtype, n: int, op: str) -> None:
    count = 37
    expected = checkdata.expected_reduction(count, n, dtype, CPU, op)
    assert torch.equal(expected, reduce_directly(count, n, dtype, op))
    # The expected result is exactly representable in the dtype: a correct op gets it bit-exact.
    assert torch.equal(expected.to(dtype).double(), expected)


def test_sum_uses_a_small_period_where_the_dtype_is_narrow() -> None:
    assert checkdata.period(torch.float32, 2) == 8
    assert checkdata.period(torch.bfloat16, 64) == 5  # 64 ranks x 4 = 256, bf16's exact limit
    assert checkdata.period(torch.int8, 200) == 1  # one-hot: the sum is 1


def test_count_wrong() -> None:
    expected = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    assert checkdata.count_wrong(torch.tensor([1, 2, 3], dtype=torch.int32), expected) == 0
    assert checkdata.count_wrong(torch.tensor([1, 5, 4], dtype=torch.int32), expected) == 2
    almost = torch.tensor([1.0, 2.0, 3.0000002], dtype=torch.float32)
    assert checkdata.count_wrong(almost, expected, "sum") == 1
    assert checkdata.count_wrong(almost, expected, "avg") == 0


@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_chunked_positions_make_every_chunk_differ(op: str) -> None:
    """reduce_scatter's check: with chunk = 8 (a multiple of K), chunk j is shifted by j, so a
    rank handed another rank's chunk sees wrong values."""
    n, chunk = 2, 8
    expected = checkdata.expected_reduction(n * chunk, n, torch.float32, CPU, op, chunk=chunk)
    direct = torch.stack(
        [
            checkdata.fill(n * chunk, r, n, torch.float32, CPU, op, chunk=chunk).double()
            for r in range(n)
        ]
    )
    reduced = {"sum": direct.sum(0), "max": direct.max(0).values, "min": direct.min(0).values}
    assert torch.equal(expected, reduced[op])
    first, second = expected[:chunk], expected[chunk:]
    assert not torch.equal(first, second)
