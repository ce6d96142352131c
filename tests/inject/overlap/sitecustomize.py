"""Test-side fault for `distbench overlap --check`: every collective issued async_op=True (only
overlap's are) returns a wrong result. Put this folder on PYTHONPATH and name the collective and
the fault:

    PYTHONPATH=tests/inject/overlap DISTBENCH_TEST_OVERLAP_FAULT=all_reduce:rotate distbench ...

rotate: the output rolled by one element after the wait; zero: zeroed after the wait; skip: the
collective never runs (a completed Work, the output left as it was). The harness's own
collectives (barriers, gathering samples) are blocking and left alone.
"""

from __future__ import annotations

import os

_SPEC = os.environ.get("DISTBENCH_TEST_OVERLAP_FAULT", "")

if _SPEC and os.environ.get("RANK") is not None:  # torchrun workers only
    import functools
    from typing import Any

    import torch
    import torch.distributed as dist

    _TORCH_NAME = {
        "all_gather": "all_gather_into_tensor",
        "reduce_scatter": "reduce_scatter_tensor",
    }
    _NAME, _, _FAULT = _SPEC.partition(":")
    _ATTR = _TORCH_NAME.get(_NAME, _NAME)
    _REAL = getattr(dist, _ATTR)

    class _Done:
        """A Work that has completed without running anything."""

        def wait(self, *args: Any) -> bool:
            return True

        def get_future(self) -> torch.futures.Future[Any]:
            future: torch.futures.Future[Any] = torch.futures.Future()
            future.set_result(None)
            return future

    class _Corrupted:
        """The real Work, whose output is damaged once waited on."""

        def __init__(self, work: Any, output: torch.Tensor) -> None:
            self.work, self.output = work, output

        def wait(self, *args: Any) -> bool:
            done = self.work.wait(*args)
            if _FAULT == "zero":
                self.output.zero_()
            else:
                self.output.copy_(self.output.roll(1))
            return bool(done)

        def get_future(self) -> Any:
            return self.work.get_future()

    @functools.wraps(_REAL)
    def _faulty(*args: Any, **kwargs: Any) -> Any:
        if not kwargs.get("async_op"):
            return _REAL(*args, **kwargs)
        if _FAULT == "skip":
            return _Done()
        return _Corrupted(_REAL(*args, **kwargs), args[0])

    setattr(dist, _ATTR, _faulty)
