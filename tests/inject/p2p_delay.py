"""The slowness both slow-peer wrappers inject (slow_rank/, slow_node/): a sleep of `delay_s`
before every send, recv, isend and irecv this process posts. Both torch.distributed's names and
distributed_c10d's are replaced: batch_isend_irecv's P2POp checks its op against the latter.
Loaded by those sitecustomize files only (tests/inject is put on sys.path by them)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any


def install(delay_s: float) -> None:
    import torch.distributed as dist
    import torch.distributed.distributed_c10d as c10d

    def delayed(real: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(real)
        def slow(*args: Any, **kwargs: Any) -> Any:
            time.sleep(delay_s)
            return real(*args, **kwargs)

        return slow

    for name in ("send", "recv", "isend", "irecv"):
        slow = delayed(getattr(c10d, name))
        setattr(c10d, name, slow)
        setattr(dist, name, slow)
