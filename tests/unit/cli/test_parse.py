"""Exact tests of every user-typed string's parser."""

from __future__ import annotations

import pytest

from distbench.parse import (
    UsageError,
    build_size_ladder,
    format_size,
    parse_dtype,
    parse_dtypes,
    parse_int,
    parse_label,
    parse_modes,
    parse_size,
    parse_sizes,
    parse_world_sizes,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", 1),
        ("4096", 4096),
        ("1K", 1024),
        ("1k", 1024),
        ("1KiB", 1024),
        ("1KB", 1024),
        ("64M", 64 * 1024 * 1024),
        ("64MiB", 64 * 1024 * 1024),
        ("1G", 1 << 30),
        ("2GiB", 2 << 30),
        ("1.5K", 1536),
        (" 8M ", 8 << 20),
        ("100B", 100),
    ],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["1X", "-5", "abc", "", "0", "0K", "1.3", "K", "1e6", "1 M B"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(UsageError) as error:
        parse_size(text)
    assert "\n" not in str(error.value)
    assert "e.g. 64M" in str(error.value)


def test_parse_sizes_sorted_unique() -> None:
    assert parse_sizes("64M,1K,1M,1K") == [1024, 1 << 20, 64 << 20]
    with pytest.raises(UsageError):
        parse_sizes("1K,,2K")


def test_size_ladder() -> None:
    assert build_size_ladder(4, 64, 2) == [4, 8, 16, 32, 64]
    assert build_size_ladder(1024, 5000, 4) == [1024, 4096]
    with pytest.raises(UsageError):
        build_size_ladder(64, 4, 2)
    with pytest.raises(UsageError):
        build_size_ladder(4, 64, 1)


def test_world_sizes() -> None:
    assert parse_world_sizes("4,2,2") == [2, 4]
    for bad in ("0", "x", "-1", "2,,4", "1.5"):
        with pytest.raises(UsageError):
            parse_world_sizes(bad)


def test_ints_and_labels() -> None:
    assert parse_int("20", "--iters") == 20
    assert parse_int("0", "--warmup", minimum=0) == 0
    with pytest.raises(UsageError, match="--iters must be at least 1, got 0"):
        parse_int("0", "--iters")
    assert parse_label("nccl-2.21_a") == "nccl-2.21_a"
    with pytest.raises(UsageError):
        parse_label("a/b")


def test_dtypes_and_modes() -> None:
    assert parse_dtype("bf16") == "bfloat16"
    assert parse_dtype("torch.float16") == "float16"
    assert parse_dtypes("fp32,float32,int8") == ["float32", "int8"]
    with pytest.raises(UsageError, match="unknown dtype 'int16'"):
        parse_dtype("int16")
    assert parse_modes("both") == ["throughput", "latency"]
    assert parse_modes("latency") == ["latency"]
    with pytest.raises(UsageError, match="choose one of throughput, latency, both"):
        parse_modes("fast")  # 'both' is a choice: the message names it (a new user's overlap)
    assert parse_modes("latency,both") == ["latency", "throughput"]


def test_format_size_inverts_parse() -> None:
    for text in ("1K", "64M", "1G", "1000"):
        assert format_size(parse_size(text)) == text
