"""Test-side fault injection for the gate's done-when: a real slowdown of one collective, never a
product flag. Put this folder on PYTHONPATH and name the function and factor:

    PYTHONPATH=tests/inject DISTBENCH_TEST_SLOW=broadcast:1.25 bash ci/nightly.sh

Every rank then sleeps (factor - 1) x the call's own duration after each torch.distributed.<name>
call (gloo calls are synchronous), so the primitive's measured time grows by the factor whatever
the box's load. Only `broadcast` is used by a single primitive (all_reduce also serves the
harness's max-over-ranks and gloo's reduce_scatter), so it is the one to slow.
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

    @functools.wraps(_REAL)
    def _slowed(*args: object, **kwargs: object) -> object:
        start = time.perf_counter()
        result = _REAL(*args, **kwargs)
        time.sleep(_EXTRA * (time.perf_counter() - start))
        return result

    setattr(dist, _NAME, _slowed)
