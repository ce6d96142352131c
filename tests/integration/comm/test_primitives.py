"""Every primitive: nccl-tests' busbw factors and size conventions (exact, no group needed), the
check patterns, and every command end to end on real gloo groups with --check. The half that
launches or runs for seconds; the in-process half, and the file's whole story:
tests/unit/comm/test_primitives.py."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from distbench.primitives.registry import PRIMITIVES
from tests.conftest import run_cli

TINY = ("--backend", "gloo", "--sizes", "1K,64K", "--iters", "3", "--warmup", "1", "--trials", "2")


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


# --- end to end on gloo ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "primitive", "extra"),
    [
        ("broadcast", "broadcast", ("--root", "1")),
        ("reduce", "reduce", ("--root", "all", "--op", "max")),
        ("allgather", "all_gather", ()),
        ("reducescatter", "reduce_scatter", ("--dtype", "bfloat16")),
        ("alltoall", "all_to_all", ("--mode", "latency")),
    ],
)
def test_command_checks_bit_exact_at_world_size_2(
    command: str, primitive: str, extra: tuple[str, ...], tmp_path: Path
) -> None:
    out = tmp_path / "run"
    result = run_cli(command, *TINY, "--world-sizes", "2", "--check", "--out", str(out), *extra)
    assert result.returncode == 0, result.stderr
    rows = read_csv(out / "results.csv")
    roots = 2 if "all" in extra else 1
    assert len(rows) == 2 * roots
    assert {r["primitive"] for r in rows} == {primitive}
    assert {r["wrong"] for r in rows} == {"0"}
    assert {r["size_bytes"] for r in rows} == {"1024", "65536"}
    if primitive in ("broadcast", "reduce"):
        assert {r["root"] for r in rows} == ({"0", "1"} if roots == 2 else {"1"})
    assert f"# {primitive}" in result.stdout


@pytest.mark.slow
def test_sweep_every_primitive_at_world_size_3_checks_and_rounds(tmp_path: Path) -> None:
    """One launch covers every primitive at 3 ranks, where 1K does not divide into 3 ranks."""
    out = tmp_path / "run"
    result = run_cli(
        "sweep",
        "--primitives",
        "all",
        *TINY,
        "--world-sizes",
        "3",
        "--check",
        "--root",
        "all",
        "--pattern",
        "all",
        "--window",
        "4",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    assert "round sizes down to whole 16-byte chunks per rank" in result.stderr
    rows = read_csv(out / "results.csv")
    assert "gloo has no reduce-scatter" in result.stderr
    assert {r["wrong"] for r in rows} == {"0"}
    by_primitive: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_primitive.setdefault(row["primitive"], []).append(row)
    assert set(by_primitive) == set(PRIMITIVES)
    for name in ("all_gather", "reduce_scatter", "all_to_all"):
        sizes = [(r["size_bytes"], r["requested_bytes"]) for r in by_primitive[name]]
        assert sizes == [("1008", "1024"), ("65520", "65536")]
        assert {float(r["busbw_factor"]) for r in by_primitive[name]} == {2 / 3}
    # torch runs reduce_scatter_tensor on gloo as an all_reduce: the rows say so.
    assert {r["pattern"] for r in by_primitive["reduce_scatter"]} == {"via_all_reduce"}
    assert {r["pattern"] for r in by_primitive["all_gather"]} == {""}
    assert len(by_primitive["broadcast"]) == 2 * 3  # 2 sizes x 3 roots
    # sendrecv, pairs 0:1: pingpong + window + ring per size.
    patterns = [r["pattern"] for r in by_primitive["send_recv"]]
    assert patterns == ["pingpong", "window=4", "ring"] * 2
    assert {r["world_size"] for r in rows} == {"3"}
    assert len({r["measurement"] for r in rows}) == len(rows)
