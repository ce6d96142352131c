"""Test-side fault injection for `distbench acceptance`: one real slow node, never a product flag.
Put this folder on PYTHONPATH in one node's environment only, with the delay in seconds:

    PYTHONPATH=tests/inject/slow_node SLOW_NODE_DELAY_S=0.002 distbench acceptance --node-rank 1 ...

Every torchrun worker of that node then sleeps the delay before each send, recv, isend and irecv it
posts, so each pair exchange with one of its ranks takes longer by (messages it posts) x delay.
The variable's name has none of the prefixes the manifest records as node facts (NCCL_, TORCH_,
DISTBENCH_ ...): the slowness alone, not a differing fact, must fail the node.
"""

from __future__ import annotations

import os
import time

_DELAY = os.environ.get("SLOW_NODE_DELAY_S", "")

if _DELAY and os.environ.get("LOCAL_RANK") is not None:  # this node's torchrun workers only
    import functools
    from collections.abc import Callable
    from typing import Any

    import torch.distributed as dist
    import torch.distributed.distributed_c10d as c10d

    _DELAY_S = float(_DELAY)

    def _delayed(real: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(real)
        def slow(*args: Any, **kwargs: Any) -> Any:
            time.sleep(_DELAY_S)
            return real(*args, **kwargs)

        return slow

    for _name in ("send", "recv", "isend", "irecv"):
        _slow = _delayed(getattr(c10d, _name))
        setattr(c10d, _name, _slow)
        setattr(dist, _name, _slow)
