"""Test-side stand-in for NCCL's TUNING log on gloo, loaded only through PYTHONPATH by
tests/integration/comm/test_nccl_trace.py: when a worker runs with NCCL_DEBUG=INFO and
NCCL_DEBUG_FILE (what --nccl-trace sets), global rank 0 appends one line per all_reduce call in the
newer NCCL format, `<host>:<pid>:<tid> [0] NCCL INFO AllReduce: <bytes> Bytes -> Algo RING proto
SIMPLE channel{Lo..Hi}={0..3}`, as NCCL's rank 0 does, and once a warning line as NCCL's logger
writes it (which --nccl-trace must copy back into the rank's log). It proves the path from the
option to the columns on CPU; the real NCCL lines are checked on a GPU node (ci/gpu-smoke.sh)."""

from __future__ import annotations

import os

if os.environ.get("RANK") == "0" and os.environ.get("DISTBENCH_TEST_NCCL_LOG"):
    import functools

    import torch.distributed as dist

    _REAL = dist.all_reduce

    @functools.wraps(_REAL)
    def _logged(tensor, *args, **kwargs):  # type: ignore[no-untyped-def]
        path = os.environ.get("NCCL_DEBUG_FILE")
        if path and os.environ.get("NCCL_DEBUG") == "INFO":
            nbytes = tensor.numel() * tensor.element_size()
            with open(path, "a", encoding="utf-8") as handle:
                if not getattr(_logged, "warned", False):
                    _logged.warned = True  # type: ignore[attr-defined]
                    handle.write(
                        f"\nvm:{os.getpid()}:1 [0] init.cc:1 (ncclCommInitRank) NCCL WARN "
                        "distbench-test: a warning NCCL wrote to its own log\n"
                    )
                handle.write(
                    f"vm:{os.getpid()}:1 [0] NCCL INFO AllReduce: {nbytes} Bytes -> Algo RING "
                    "proto SIMPLE channel{Lo..Hi}={0..3}\n"
                )
        return _REAL(tensor, *args, **kwargs)

    dist.all_reduce = _logged
