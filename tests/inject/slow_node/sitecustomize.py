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

_DELAY = os.environ.get("SLOW_NODE_DELAY_S", "")

if _DELAY and os.environ.get("LOCAL_RANK") is not None:  # this node's torchrun workers only
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/inject: p2p_delay
    from p2p_delay import install

    install(float(_DELAY))
