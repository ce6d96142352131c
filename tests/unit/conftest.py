"""tests/unit starts no process: no subprocess, no fork, no spawn, no torchrun. Each unit test
runs with process creation refused (PermissionError, an OSError, so a product probe of an
optional tool such as scontrol, git or nvidia-smi reads "absent", as on a bare box), which turns
the folder's rule into a checked one: a test that launches fails here, naming the folder it
belongs in. torch.distributed is not touched: in-process gloo groups of one rank are allowed."""

from __future__ import annotations

import multiprocessing.process
import os
import subprocess
from typing import NoReturn

import pytest

WHY = "tests/unit starts no process: move this test to tests/integration"


def refuse(*args: object, **kwargs: object) -> NoReturn:
    raise PermissionError(WHY)


@pytest.fixture(autouse=True)
def no_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subprocess.Popen, "_execute_child", refuse)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refuse)
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "execv", "execve"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse)
