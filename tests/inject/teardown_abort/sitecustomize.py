"""Test-side fault injection: one rank aborts while leaving the group, after every measurement,
as torch's teardown once did in CI ("terminate called without an active exception", SIGABRT).
Never a product flag. Put this folder on PYTHONPATH and name the rank:

    PYTHONPATH=tests/inject/teardown_abort DISTBENCH_TEST_TEARDOWN_ABORT=1 distbench allreduce ...

That torchrun worker then calls os.abort() in place of torch.distributed.destroy_process_group,
which the worker calls once its measurements are done.
"""

from __future__ import annotations

import os

if os.environ.get("RANK") is not None and os.environ.get("RANK") == os.environ.get(
    "DISTBENCH_TEST_TEARDOWN_ABORT"
):
    import torch.distributed as dist

    def _abort(*_args: object, **_kwargs: object) -> None:
        os.abort()

    dist.destroy_process_group = _abort
