"""Test-side fault injection for `distbench pairs`: one real slow rank, never a product flag. Put
this folder on PYTHONPATH and name the rank and the delay:

    PYTHONPATH=tests/inject/slow_rank DISTBENCH_TEST_SLOW_RANK=2:0.005 distbench pairs ...
    DISTBENCH_TEST_SLOW_RANK=1,3:0.005 ...     # several ranks: a comma list

Each such torchrun worker then sleeps the delay (seconds) before every send, recv, isend and
irecv it posts, so every exchange it takes part in takes longer by (messages it posts) x delay:
its pairs are slow and the others are not. Both torch.distributed's names and distributed_c10d's are
replaced: batch_isend_irecv's P2POp checks its op against the latter.
"""

from __future__ import annotations

import os

_SPEC = os.environ.get("DISTBENCH_TEST_SLOW_RANK", "")
_RANK, _, _DELAY = _SPEC.partition(":")

if _SPEC and os.environ.get("RANK") in _RANK.split(","):  # the chosen torchrun workers only
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/inject: p2p_delay
    from p2p_delay import install

    install(float(_DELAY or "0.005"))
