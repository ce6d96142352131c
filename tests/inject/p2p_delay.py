"""The slowness the slow-peer wrappers inject (slow_rank/, slow_node/, slow_first/): a sleep of
`delay_s` before every send, recv, isend and irecv this process posts, or before its `first`
posts only. Both torch.distributed's names and distributed_c10d's are replaced:
batch_isend_irecv's P2POp checks its op against the latter. Loaded by those sitecustomize files
only (tests/inject is put on sys.path by them)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any


def install(delay_s: float, first: int = 0) -> None:
    """Delay every post, or (`first` > 0) the process's first `first` posts, counted over the
    four names together."""
    import torch.distributed as dist
    import torch.distributed.distributed_c10d as c10d

    posted = [0]

    def delayed(real: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(real)
        def slow(*args: Any, **kwargs: Any) -> Any:
            posted[0] += 1
            if not first or posted[0] <= first:
                time.sleep(delay_s)
            return real(*args, **kwargs)

        return slow

    for name in ("send", "recv", "isend", "irecv"):
        slow = delayed(getattr(c10d, name))
        setattr(c10d, name, slow)
        setattr(dist, name, slow)
