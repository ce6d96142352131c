"""Test-side fault injection for `distbench pairs`' confirmation: one rank slow for its first
measurement only, never a product flag. Put this folder on PYTHONPATH and name the rank, the
delay and how many of its posts it slows:

    PYTHONPATH=tests/inject/slow_first DISTBENCH_TEST_SLOW_FIRST=1:0.005:1248 distbench pairs ...

That torchrun worker then sleeps the delay (seconds) before each of its first 1248 sends, recvs,
isends and irecvs, and posts the rest at full speed: a rank that was slow while its pairs were
first measured and is healthy when they are measured again (a box's passing load). The test
counts the posts of the first measurement from its options (rounds x (warmup + trials x iters)
exchanges x 2 x window).
"""

from __future__ import annotations

import os

_SPEC = os.environ.get("DISTBENCH_TEST_SLOW_FIRST", "")
_RANK, _DELAY, _FIRST = ([*_SPEC.split(":"), "", ""])[:3]

if _SPEC and os.environ.get("RANK") == _RANK:  # the chosen torchrun worker only
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/inject: p2p_delay
    from p2p_delay import install

    install(float(_DELAY or "0.005"), int(_FIRST or "0"))
