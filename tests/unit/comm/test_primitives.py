"""Every primitive: nccl-tests' busbw factors and size conventions (exact, no group needed), the
check patterns, and every command end to end on real gloo groups with --check."""

from __future__ import annotations

import pytest
import torch

from distbench.comm.primitive_args import check_counts, parse_primitives, parse_root
from distbench.parse import UsageError
from distbench.primitives.base import CaseRequest, Context
from distbench.primitives.facts import COMMANDS, root_ranks
from distbench.primitives.registry import PRIMITIVES

CPU = torch.device("cpu")


def context(world_size: int, rank: int = 0) -> Context:
    """A rank's view without a process group: enough to build cases (nothing runs)."""
    return Context(
        rank=rank,
        world_size=world_size,
        device=CPU,
        backend="gloo",
        global_ranks=tuple(range(world_size)),
    )


# --- busbw factors (docs/method.md#bandwidth-algbw-and-busbw: nccl-tests, src/<collective>.cu) ---

FACTORS = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_to_all": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "send_recv": lambda n: 1.0,
    "all_to_allv": lambda n: (n - 1) / n,  # uniform splits; each case carries its own
    "gather": lambda n: (n - 1) / n,  # nccl-tests' GatherGetBw
}


def test_every_primitive_has_a_command_and_a_factor() -> None:
    assert set(PRIMITIVES) == set(FACTORS)
    assert set(COMMANDS.values()) == set(PRIMITIVES)


@pytest.mark.parametrize("name", sorted(FACTORS))
@pytest.mark.parametrize("n", [1, 2, 3, 4, 8, 64])
def test_busbw_factor(name: str, n: int) -> None:
    assert PRIMITIVES[name].busbw_factor(n) == FACTORS[name](n)


def test_busbw_factor_values() -> None:
    assert PRIMITIVES["all_gather"].busbw_factor(4) == 0.75
    assert PRIMITIVES["all_to_all"].busbw_factor(3) == 2 / 3
    assert PRIMITIVES["reduce_scatter"].busbw_factor(1) == 0.0
    assert PRIMITIVES["broadcast"].busbw_factor(8) == 1.0


# --- sizes ----------------------------------------------------------------------------------------


def nccl_tests_chunk(requested_bytes: int, dtype: torch.dtype, n: int) -> int:
    """nccl-tests 2.19.6 (src/all_gather.cu, reduce_scatter.cu, alltoall.cu), verbatim:
    base = (count/nranks) & -(16/eltSize), count = bytes / eltSize."""
    count = requested_bytes // dtype.itemsize
    return (count // n) & -(16 // dtype.itemsize)


@pytest.mark.parametrize("name", ["all_gather", "reduce_scatter", "all_to_all"])
def test_gather_type_size_is_n_whole_16_byte_chunks_as_nccl_tests(name: str) -> None:
    prim = PRIMITIVES[name]
    # 1K of float32 at 3 ranks: 256 elements / 3 = 85 -> 84 (16-byte chunks), 1008 bytes.
    [case] = prim.build_cases(context(3), CaseRequest(1024, torch.float32, "sum", "0"))
    assert (case.size_bytes, case.count) == (1008, 252)
    # At 2 ranks nothing is rounded: the whole buffer is the size asked for.
    [case] = prim.build_cases(context(2), CaseRequest(1024, torch.float32, "sum", "0"))
    assert (case.size_bytes, case.count) == (1024, 256)
    # bf16 at 3 ranks: 1000 B = 500 elements, 166 per rank -> 160 (8 per 16 bytes): 960 B.
    [case] = prim.build_cases(context(3), CaseRequest(1000, torch.bfloat16, "sum", "0"))
    assert (case.size_bytes, case.count) == (960, 480)
    assert prim.count_multiple(3, torch.float32) == 12
    assert prim.count_multiple(3, torch.int8) == 48
    emulated = name == "reduce_scatter"  # on gloo: an all_reduce in disguise, labelled
    pattern = {"pattern": "via_all_reduce"} if emulated else {}
    assert case.labels == {**pattern, "placement": "out"}  # --placement default
    # Every size, dtype and world size: the same chunk as nccl-tests, n chunks in size_bytes.
    for n in (2, 3, 5, 8, 12):
        for dtype in (torch.float32, torch.bfloat16, torch.int8, torch.float64):
            for requested in (16 * n, 1000, 1024, 4096 + 17, 65536 * 3 + 5):
                chunk = nccl_tests_chunk(requested, dtype, n)
                if chunk == 0:
                    continue  # the CLI refuses such sizes (check_counts)
                [case] = prim.build_cases(context(n), CaseRequest(requested, dtype, "sum", "0"))
                assert case.count == n * chunk
                assert case.size_bytes == n * chunk * dtype.itemsize
                assert case.size_bytes % (16 * n) == 0


@pytest.mark.parametrize("name", ["all_reduce", "broadcast", "reduce", "send_recv"])
def test_per_rank_size_is_one_buffer(name: str) -> None:
    cases = PRIMITIVES[name].build_cases(context(3), CaseRequest(1024, torch.float32, "sum", "0"))
    assert {(c.size_bytes, c.count) for c in cases} == {(1024, 256)}
    assert PRIMITIVES[name].count_multiple(3, torch.float32) == 1


@pytest.mark.parametrize("name", ["broadcast", "reduce"])
def test_root_all_gives_one_case_per_root_sharing_a_buffer(name: str) -> None:
    prim = PRIMITIVES[name]
    cases = prim.build_cases(context(3), CaseRequest(64, torch.float32, "sum", "all"))
    assert [c.labels["root"] for c in cases] == ["0", "1", "2"]
    assert prim.case_count(3, "all", {}) == 3
    assert prim.case_count(3, "2", {}) == 1
    assert [
        c.labels["root"]
        for c in prim.build_cases(context(3), CaseRequest(64, torch.float32, "sum", "2"))
    ]
    assert root_ranks("all", 4) == [0, 1, 2, 3]
    assert root_ranks("1", 4) == [1]


def test_check_counts_refuses_empty_ranks_and_notes_rounding() -> None:
    assert check_counts(["all_reduce"], [1024], ["float32"], [3]) is None
    assert check_counts(["all_gather"], [1024], ["float32"], [2, 4]) is None
    note = check_counts(["all_gather", "all_to_all"], [1024], ["float32"], [3])
    assert note is not None
    assert "all_gather, all_to_all" in note and "1K -> 1008 B" in note
    assert "whole 16-byte chunks per rank, as nccl-tests" in note
    assert check_counts(["all_gather"], [1024], ["int8"], [4]) is None  # 4 x 16 divides 1024
    both = check_counts(["all_gather", "gather"], [1024], ["float32"], [3])  # two roundings
    assert both is not None and both.count("note: ") == 2
    assert "gather round sizes down to whole elements per rank" in both and "1K -> 1020 B" in both
    with pytest.raises(UsageError, match="at least 48 B"):
        check_counts(["all_gather"], [32], ["float32"], [3])
    with pytest.raises(UsageError, match="at least 4 B"):
        check_counts(["all_reduce"], [2], ["float32"], [3])


def test_parse_root_and_primitives() -> None:
    assert parse_root("all") == "all"
    assert parse_root(" 2 ") == "2"
    for bad in ("-1", "x", "1.5", ""):
        with pytest.raises(UsageError, match="is not a rank"):
            parse_root(bad)
    assert parse_primitives("allreduce,sendrecv,all_gather") == (
        "all_reduce",
        "send_recv",
        "all_gather",
    )
    assert parse_primitives("all") == tuple(PRIMITIVES)
    assert parse_primitives("gather") == ("gather",)
    with pytest.raises(UsageError, match="unknown primitive 'scatter'"):
        parse_primitives("scatter")
