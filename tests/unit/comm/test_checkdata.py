"""The check data: exact in every dtype, and such that every wrong result a collective could
produce (rotated, misrouted, another op, no op, zeroed, never written) is wrong somewhere. No
group needed: every rank's data is generated here and reduced directly."""

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
OPS = ["sum", "prod", "max", "min", "avg"]


def fills(count: int, n: int, dtype: torch.dtype, op: str, start: int = 0) -> list[torch.Tensor]:
    return [checkdata.fill(count, r, n, dtype, CPU, op, start) for r in range(n)]


def reduce_in_dtype(data: list[torch.Tensor], op: str) -> torch.Tensor:
    """Rank by rank in the dtype itself, as a ring would: any rounding or overflow shows."""
    result = data[0].clone()
    for other in data[1:]:
        if op in ("sum", "avg"):
            result = result + other
        elif op == "prod":
            result = result * other
        elif op == "max":
            result = torch.maximum(result, other)
        else:
            result = torch.minimum(result, other)
    if op == "avg":
        return result.double() / len(data)
    return result.double()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 3, 8, 12, 100, 300])
@pytest.mark.parametrize("op", OPS)
def test_expected_is_exact_in_the_dtype(dtype: torch.dtype, n: int, op: str) -> None:
    count = 64
    expected = checkdata.expected_reduction(count, n, dtype, CPU, op)
    assert torch.equal(reduce_in_dtype(fills(count, n, dtype, op), op), expected)
    assert torch.equal(expected.to(dtype).double(), expected)
    # The sentinel equals no expected value: an element never written is always wrong.
    assert not (expected == checkdata.sentinel(dtype)).any()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.int8])
@pytest.mark.parametrize("n", [2, 3, 4, 8, 12, 16, 64])
@pytest.mark.parametrize("op", OPS)
def test_every_wrong_result_is_wrong_somewhere(dtype: torch.dtype, n: int, op: str) -> None:
    """The old data failed these: at n = 8 every rank summed to 28 at every element, a rotation
    by 8 passed at every n, avg data were equal on every rank, prod data had product = max, and
    min's result was 0 at n >= 8."""
    count = 64
    expected = checkdata.expected_reduction(count, n, dtype, CPU, op)
    data = fills(count, n, dtype, op)
    wrong = {
        "rotate 1": expected.roll(1),
        "rotate 8": expected.roll(8),
        "zero": torch.zeros(count, dtype=torch.float64),
        "sentinel": checkdata.fill_sentinel(count, dtype, CPU).double(),
    }
    for rank, own in enumerate(data):
        wrong[f"no-op on rank {rank}"] = own.double()  # the op was skipped
    for other in OPS:
        if other != op and not (other == "avg" and not dtype.is_floating_point):
            wrong[f"{other} instead"] = reduce_in_dtype(data, other)
    for name, result in wrong.items():
        assert checkdata.count_wrong(result.to(dtype), expected, op, n) > 0, name
    # Zeroed and never-written results are wrong at every element.
    for name in ("zero", "sentinel"):
        assert checkdata.count_wrong(wrong[name].to(dtype), expected, op, n) == count, name
    # The result varies along the buffer: no period that a rotation could match.
    assert len(set(expected.tolist())) > 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_moved_data_differs_per_sender_and_position(dtype: torch.dtype) -> None:
    """all_to_all at n = 12 in int8: the old offsets r * n + j wrapped mod 128 and collided.
    Every (sender, chunk) now differs from every other, and from zero and the sentinel."""
    n, chunk = 12, 16
    sent = {s: checkdata.fill_pattern(n * chunk, s, dtype, CPU) for s in range(n)}
    chunks = {(s, j): sent[s][j * chunk : (j + 1) * chunk] for s in range(n) for j in range(n)}
    for (s, j), data in chunks.items():
        expected = checkdata.expected_pattern(chunk, s, dtype, CPU, start=j * chunk)
        assert checkdata.count_wrong(data, expected) == 0
        assert checkdata.wrong_moved(data, s, start=j * chunk) == 0
        for other in ((s + 1) % n, j), (s, (j + 1) % n):
            assert checkdata.wrong_moved(chunks[other], s, start=j * chunk) > chunk // 2
        assert checkdata.wrong_moved(torch.zeros(chunk, dtype=dtype), s, j * chunk) == chunk
        sentinel = checkdata.fill_sentinel(chunk, dtype, CPU)
        assert checkdata.wrong_moved(sentinel, s, j * chunk) == chunk
    assert checkdata.wrong_moved(sent[0].roll(1), 0) > n * chunk // 2
    assert checkdata.wrong_moved(sent[0].roll(8), 0) > n * chunk // 2


def test_data_depends_on_the_global_position_only() -> None:
    """Blocks and `start`: a chunk generated alone equals the same positions of the whole buffer,
    so reduce_scatter can check rank r's chunk at start = r * chunk."""
    whole = checkdata.fill(100, 2, 4, torch.float32, CPU, "sum")
    part = checkdata.fill(30, 2, 4, torch.float32, CPU, "sum", start=40)
    assert torch.equal(whole[40:70], part)
    expected = checkdata.expected_reduction(100, 4, torch.float32, CPU, "sum")
    reduced = reduce_in_dtype(fills(100, 4, torch.float32, "sum"), "sum")
    assert checkdata.wrong_reduced(reduced[40:70].float(), 4, "sum", start=40) == 0
    assert torch.equal(expected[40:70], reduced[40:70])


def test_blocks_give_the_same_data(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = checkdata.fill(50, 1, 3, torch.bfloat16, CPU, "prod")
    moved = checkdata.fill_pattern(50, 1, torch.int8, CPU)
    reduced = reduce_in_dtype(fills(50, 3, torch.bfloat16, "prod"), "prod").to(torch.bfloat16)
    monkeypatch.setitem(checkdata.BLOCK, "cpu", 7)
    assert torch.equal(checkdata.fill(50, 1, 3, torch.bfloat16, CPU, "prod"), whole)
    assert torch.equal(checkdata.fill_pattern(50, 1, torch.int8, CPU), moved)
    assert checkdata.wrong_reduced(reduced, 3, "prod") == 0
    assert checkdata.wrong_reduced(reduced.roll(1), 3, "prod") > 0
    assert checkdata.wrong_moved(moved, 1) == 0


def test_ranges_per_dtype() -> None:
    assert checkdata.limit(torch.bfloat16) == 256
    assert checkdata.limit(torch.int64) == 1 << 31  # draws stay within int64
    assert checkdata.sentinel(torch.uint8) == 255 and checkdata.sentinel(torch.int8) == -128
    assert checkdata.sentinel(torch.bfloat16) == 0.5  # every expected value is an integer
    assert checkdata.prod_width(torch.bfloat16, 8) == 5  # 3**5 = 243 <= 256
    assert checkdata.prod_width(torch.float32, 8) == 8
    assert checkdata.prod_width(torch.int8, 300) == 4  # 81 <= 127
    assert checkdata.avg_base(torch.bfloat16, 8) == 6  # the average stays below 256 / 40
    assert checkdata.avg_base(torch.bfloat16, 64) == 3  # (256 - 32) / 64: 3 values still


def test_count_wrong_is_bit_exact_except_a_float_avg() -> None:
    expected = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    assert checkdata.count_wrong(torch.tensor([1, 2, 3], dtype=torch.int32), expected) == 0
    assert checkdata.count_wrong(torch.tensor([1, 5, 4], dtype=torch.int32), expected) == 2
    almost = torch.tensor([1.0, 2.0, 3.0000002], dtype=torch.float32)
    assert checkdata.count_wrong(almost, expected, "sum") == 1
    assert checkdata.count_wrong(almost, expected, "avg", world_size=3) == 0
    nan = torch.tensor([1.0, float("nan"), float("inf")])
    assert checkdata.count_wrong(nan, expected) == checkdata.count_wrong(nan, expected, "avg") == 2
    # The avg tolerance bounds rounding: a result off by one is still wrong.
    big = torch.tensor([checkdata.limit(torch.float32) // 40], dtype=torch.float64)
    assert checkdata.count_wrong((big + 1).float(), big, "avg", world_size=8) == 1


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_data_equals_cpu_data() -> None:
    cuda = torch.device("cuda")
    for op in OPS:
        on_gpu = checkdata.fill(1000, 3, 8, torch.bfloat16, cuda, op).cpu()
        assert torch.equal(on_gpu, checkdata.fill(1000, 3, 8, torch.bfloat16, CPU, op))
        expected = checkdata.expected_reduction(1000, 8, torch.float32, cuda, op).cpu()
        assert torch.equal(expected, checkdata.expected_reduction(1000, 8, torch.float32, CPU, op))
    on_gpu = checkdata.fill_pattern(1000, 5, torch.int8, cuda).cpu()
    assert torch.equal(on_gpu, checkdata.fill_pattern(1000, 5, torch.int8, CPU))
