"""Test-side corruption of torch.distributed.gather in distbench's workers, to prove that
`distbench gather --check` sees every wrong result (tests/integration/comm/test_gather.py).
Never a product flag: put this folder on PYTHONPATH and name the fault.

    PYTHONPATH=tests/inject/gather_faults DISTBENCH_TEST_GATHER=rotate distbench gather --check

Every worker's gather then runs the REAL gather (gloo's) and damages what the root received:

- rotate: the root's gathered buffer rotated by one element;
- swap: the chunks from ranks 0 and 1 trade places on the root;
- skip: gather is not called at all (on any rank);
- root: the data is gathered to the rank after the real root, so the real root never receives.

Each worker also leaves a file named after its rank in $DISTBENCH_TEST_MARKS (when set), so
the test can see that the hook ran.
"""

from __future__ import annotations

import os

_FAULT = os.environ.get("DISTBENCH_TEST_GATHER", "")

if _FAULT and os.environ.get("LOCAL_RANK") is not None:  # a worker, not the CLI or the agent
    import functools
    from typing import Any

    import torch
    import torch.distributed as dist

    _REAL = dist.gather

    def _to_next_root(tensor: torch.Tensor, kwargs: dict[str, Any]) -> Any:
        group = kwargs.get("group") or dist.group.WORLD
        size = dist.get_world_size(group)
        after = (dist.get_group_rank(group, kwargs["dst"]) + 1) % size
        mine = dist.get_group_rank(group, dist.get_rank())
        into = [torch.empty_like(tensor) for _ in range(size)] if mine == after else None
        return _REAL(tensor, gather_list=into, dst=dist.get_global_rank(group, after), group=group)

    @functools.wraps(_REAL)
    def _faulty(tensor: torch.Tensor, **kwargs: Any) -> Any:
        if _FAULT == "skip":
            return None
        if _FAULT == "root":
            return _to_next_root(tensor, kwargs)
        result = _REAL(tensor, **kwargs)
        chunks = kwargs.get("gather_list")
        if chunks:
            joined = torch.cat(chunks)
            if _FAULT == "rotate":
                joined = joined.roll(1)
            elif _FAULT == "swap":
                joined = torch.cat([chunks[1], chunks[0], *chunks[2:]])
            for chunk, part in zip(chunks, joined.split(len(chunks[0])), strict=True):
                chunk.copy_(part)
        return result

    dist.gather = _faulty
    if os.environ.get("DISTBENCH_TEST_MARKS"):
        open(os.path.join(os.environ["DISTBENCH_TEST_MARKS"], os.environ["RANK"]), "w").close()
