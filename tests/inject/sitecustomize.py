"""Test-side fault injection for the gate's done-when: a real slowdown of one collective, never a
product flag. Put this folder on PYTHONPATH and name the function and factor:

    PYTHONPATH=tests/inject DISTBENCH_TEST_SLOW=broadcast:1.25 bash ci/nightly.sh

Every rank then spins for (factor - 1) x the fastest call so far of that size (numel and dtype)
after each torch.distributed.<name> call (gloo calls are synchronous), so every size of the
primitive takes `factor` times as long. The fastest call, not this call's own time: that one
includes waiting for the other ranks' extra time, and would compound from call to call. A spin,
not time.sleep: on a loaded box a sleep of 200 us wakes up milliseconds late. Only
`broadcast` is used by a single primitive (all_reduce also serves the harness's max-over-ranks and
gloo's reduce_scatter), so it is the one to slow.
"""

from __future__ import annotations

import os
import time

_SPEC = os.environ.get("DISTBENCH_TEST_SLOW", "")

if _SPEC and os.environ.get("RANK") is not None:  # torchrun workers only
    import functools

    import torch.distributed as dist

    _NAME, _, _FACTOR = _SPEC.partition(":")
    _EXTRA = float(_FACTOR or "1.25") - 1.0
    _REAL = getattr(dist, _NAME)
    _FASTEST: dict[tuple[int, str], float] = {}

    @functools.wraps(_REAL)
    def _slowed(*args: object, **kwargs: object) -> object:
        tensor = args[0] if args else kwargs.get("tensor")
        key = (int(getattr(tensor, "numel", lambda: 0)()), str(getattr(tensor, "dtype", "")))
        start = time.perf_counter()
        result = _REAL(*args, **kwargs)
        elapsed = time.perf_counter() - start
        fastest = _FASTEST[key] = min(elapsed, _FASTEST.get(key, elapsed))
        until = time.perf_counter() + _EXTRA * fastest
        while time.perf_counter() < until:
            pass
        return result

    setattr(dist, _NAME, _slowed)
