"""The mutation suite of one world size: every primitive x dtype x op x mutation, in one gloo
process group (one launch per world size, #20 §3).

    python -m tests.mutation.driver WORLD_SIZE OUT_JSON

The parent imports torch once and forks the ranks (an interpreter per rank would spend most of
the time importing torch n times on a 2-core box).

Each case runs the primitive's own `check()`, as `--check` does, first as it is (must report 0
wrong elements), then under every mutation of tests/mutation/corrupt.py (must report > 0).
Wrong elements are summed over ranks, as the product sums them. Rank 0 writes {case: wrong} to
OUT_JSON.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from distbench.primitives.base import Case, CaseRequest, Context
from distbench.primitives.registry import PRIMITIVES
from tests.mutation.corrupt import REDUCING, corrupted, mutations

TIMEOUT_S = 500
OPS = ("sum", "prod", "max", "min", "avg")
CHUNK_BYTES = 128
"""Per-rank bytes: 32 float32 (128 int8) elements, more than a rotation by 8 moves, and a whole
16-byte-aligned chunk, so nothing is rounded."""
INT_OPS = ("sum", "prod", "max", "min")
LAST = "last"
"""Root: the highest rank (a root other than 0); 'all' rotates the root over every rank."""
PLAN: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    # (primitive, dtypes, ops, root): bf16 and int8 for the narrowest exact ranges.
    ("all_reduce", ("float32", "bfloat16"), OPS, LAST),
    ("all_reduce", ("int8",), INT_OPS, LAST),
    ("reduce", ("float32", "bfloat16"), OPS, LAST),
    ("reduce", ("float32",), ("sum",), "all"),
    ("reduce_scatter", ("float32", "bfloat16"), OPS, LAST),
    ("reduce_scatter", ("int8",), INT_OPS, LAST),
    ("broadcast", ("float32",), ("sum",), "all"),
    ("broadcast", ("int8",), ("sum",), LAST),
    ("all_gather", ("float32", "int8"), ("sum",), LAST),
    ("all_to_all", ("float32", "int8"), ("sum",), LAST),  # int8: the old offsets collided
    ("send_recv", ("float32",), ("sum",), LAST),
    ("all_to_allv", ("float32", "int8"), ("sum",), LAST),
    ("gather", ("float32", "int8"), ("sum",), LAST),
    ("gather", ("float32",), ("sum",), "all"),
]
PLACED = ("all_gather", "reduce_scatter")
"""Checked out of place and in place (gloo's in-place all_to_all is wrong: the CLI refuses it)."""


def all_to_allv_options(world_size: int) -> list[dict[str, Any]]:
    """Every split form: equal, zipf and hot shares, and the MoE routing (2 experts per rank)."""
    moe = {"tokens": 6, "hidden": 4, "experts": 2 * world_size, "topk": 2}
    return [
        {"skew": "uniform"},
        {"skew": "zipf:1.5", "seed": 1},
        {"skew": "hot:0.5", "seed": 2},
        {"skew": "zipf:1.2", "seed": 3, "moe": moe},
    ]


def primitive_options(primitive: str, world_size: int) -> list[dict[str, Any]]:
    if primitive == "send_recv":
        return send_recv_options(world_size)
    if primitive == "all_to_allv":
        return all_to_allv_options(world_size)
    return [{"placements": ["out", "in"]}] if primitive in PLACED else [{}]


def send_recv_options(world_size: int) -> list[dict[str, Any]]:
    pairs = [[0, 1], [world_size - 1, 0]]
    patterns = {"patterns": ["pingpong", "window", "ring"], "pairs": pairs, "window": 2}
    bidirectional = {"patterns": ["window"], "pairs": pairs, "window": 2, "bidirectional": True}
    if world_size % 2:
        return [patterns, bidirectional]  # multipair pairs i with i + n/2: even n only
    multipair = {"patterns": ["multipair"], "window": 2}
    return [patterns, bidirectional, multipair, {**multipair, "bidirectional": True}]


def cases(ctx: Context) -> Iterator[tuple[str, str, str, Case]]:
    """(primitive, name, op, case) for every case of the plan at this world size."""
    n = ctx.world_size
    for primitive, dtypes, ops, root in PLAN:
        prim = PRIMITIVES[primitive]
        root = str(n - 1) if root == LAST else root
        for dtype_name in dtypes:
            for op in ops:
                dtype = getattr(torch, dtype_name)
                for option in primitive_options(primitive, n):
                    built = prim.build_cases(
                        ctx, CaseRequest(n * CHUNK_BYTES, dtype, op, root, option)
                    )
                    for case in built:
                        labels = ",".join(f"{k}={v}" for k, v in sorted(case.labels.items()))
                        reduced = f"/{op}" if primitive in REDUCING else ""
                        yield primitive, f"{primitive}/{dtype_name}{reduced}/{labels}", op, case


def run(ctx: Context) -> dict[str, int]:
    """{case/mutation: wrong elements summed over ranks}; 'none' is the unmutated check."""
    local: dict[str, int] = {}
    for primitive, name, op, case in cases(ctx):
        local[f"{name}/none"] = case.check()
        for mutation in mutations(primitive, op, OPS):
            if mutation == "other:avg" and "int8" in name:
                continue  # no integer avg (the CLI refuses it)
            if mutation == "lose1" and primitive in REDUCING and "placement=in" in name:
                continue  # its buffer held this rank's own data: right at one element (max)
            with corrupted(primitive, mutation, ctx):
                local[f"{name}/{mutation}"] = case.check()
    # Summed over ranks as the product sums each check (ranks.sum_over_ranks), in one call.
    total = torch.tensor(list(local.values()), dtype=torch.int64)
    dist.all_reduce(total, group=ctx.group)
    return dict(zip(local, total.tolist(), strict=True))


def run_rank(store: str, rank: int, world_size: int, out: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo",
        init_method=f"file://{store}",
        rank=rank,
        world_size=world_size,
        timeout=timedelta(seconds=60),
    )
    try:
        ctx = Context(rank, world_size, torch.device("cpu"), "gloo", None, tuple(range(world_size)))
        results = run(ctx)
        if rank == 0:
            with open(out, "w") as handle:
                json.dump(results, handle, indent=1)
    finally:
        dist.destroy_process_group()


def main(argv: list[str]) -> int:
    world_size, out = int(argv[0]), argv[1]
    store = str(Path(out).with_suffix(".store"))
    fork = multiprocessing.get_context("fork")
    ranks = [
        fork.Process(target=run_rank, args=(store, r, world_size, out)) for r in range(world_size)
    ]
    for proc in ranks:
        proc.start()
    deadline = time.monotonic() + TIMEOUT_S
    for proc in ranks:
        proc.join(max(0.0, deadline - time.monotonic()))
    for proc in ranks:
        if proc.is_alive():
            proc.kill()  # a hung collective: the others were waiting on it
    codes = [proc.exitcode for proc in ranks]
    if codes != [0] * world_size:
        print(f"ranks exited with {codes}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
