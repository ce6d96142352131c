"""Test-side fault for `distbench init`: another process takes the port rank 0 picked before its
store listens there (what a concurrent run's TensorPipe listener did in CI). Put this folder on
PYTHONPATH:

    PYTHONPATH=tests/inject/port_taken DISTBENCH_TEST_PORT_TAKEN=1 distbench init ...

Rank 0 binds and listens at the port of the first fresh group (the call after the launch's own
init_process_group) just before the real init_process_group creates its store there, which then
fails on its own: the run must report that error, not one from tearing down."""

from __future__ import annotations

import os

if os.environ.get("DISTBENCH_TEST_PORT_TAKEN") and os.environ.get("RANK") == "0":
    import functools
    import socket
    from typing import Any
    from urllib.parse import urlparse

    import torch.distributed as dist

    _REAL = dist.init_process_group
    _CALLS: list[socket.socket] = []  # the launch's call, then the taken port's socket

    @functools.wraps(_REAL)
    def _taken(*args: Any, **kwargs: Any) -> Any:
        if len(_CALLS) == 1:
            url = str(kwargs.get("init_method", "env://"))
            port = os.environ["MASTER_PORT"] if url == "env://" else urlparse(url).port
            thief = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            thief.bind(("", int(port)))
            thief.listen()
            _CALLS.append(thief)
        elif not _CALLS:
            _CALLS.append(socket.socket())  # a placeholder: the launch's group is not touched
        return _REAL(*args, **kwargs)

    dist.init_process_group = _taken
