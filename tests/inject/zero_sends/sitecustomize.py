"""Test-side fault for `distbench pipeline`: one rank's isend posts zeros instead of its tensor
(in place: the tensor it hands on is zeroed first). Put this folder on PYTHONPATH and name the
rank:

    PYTHONPATH=tests/inject/zero_sends DISTBENCH_TEST_ZERO_SENDS_RANK=1 distbench pipeline ...

At world size 2, rank 1 (the last stage) sends only the gradients of its input (and, under
torch.distributed.pipelining, uint8 messages of pickled shapes, left alone): stage 0 then
trains on zero gradients, and max_param_diff must show it. Both torch.distributed's name and
distributed_c10d's are replaced: batch_isend_irecv's P2POp (torch.distributed.pipelining) checks
its op against the latter."""

from __future__ import annotations

import os

if os.environ.get("RANK") == os.environ.get("DISTBENCH_TEST_ZERO_SENDS_RANK", "-"):
    import functools
    from typing import Any

    import torch.distributed as dist
    import torch.distributed.distributed_c10d as c10d

    _REAL = c10d.isend

    @functools.wraps(_REAL)
    def _zeroed(tensor: Any, *args: Any, **kwargs: Any) -> Any:
        if tensor.is_floating_point():  # not the library's pickled shape messages (uint8)
            tensor.detach().zero_()
        return _REAL(tensor, *args, **kwargs)

    c10d.isend = _zeroed
    dist.isend = _zeroed
