"""ranks.agreed_failure on a real 3-rank gloo group: a failure of one rank's local step becomes
every rank's, named with the lowest failing rank, before the collective step that the failed
rank would never join (--buffers symmetric's probe: allocation, then rendezvous)."""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from distbench.primitives.base import Context
from distbench.ranks import agreed_failure

CASES: list[dict[int, str]] = [{}, {1: "no peer access"}, {2: "late", 1: "first"}]
"""Per case: rank -> the error its local step raised (absent: it passed)."""


def _rank(rank: int, world_size: int, init_file: str, out: str) -> None:
    dist.init_process_group(
        "gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size
    )
    try:
        ctx = Context(rank, world_size, torch.device("cpu"), "gloo", None, tuple(range(world_size)))
        seen = [agreed_failure(ctx, case.get(rank)) for case in CASES]
        dist.barrier()  # every rank got here: nobody was left waiting
        Path(f"{out}.{rank}").write_text(json.dumps(seen))
    finally:
        dist.destroy_process_group()


def test_one_ranks_failure_is_every_ranks(tmp_path: Path) -> None:
    out = str(tmp_path / "seen")
    mp.spawn(_rank, args=(3, str(tmp_path / "init"), out), nprocs=3, join=True)
    seen = [json.loads(Path(f"{out}.{rank}").read_text()) for rank in range(3)]
    expected = [None, "rank 1: no peer access", "rank 1: first"]
    assert seen == [expected] * 3
