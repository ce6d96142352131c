"""tests/unit's own rule, proven by breaking it: every way a test could start a process raises
PermissionError naming the folder it belongs in (tests/unit/conftest.py), and a product probe
of an optional tool reads the tool as absent instead of failing."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
from collections.abc import Callable

import pytest

from distbench.options.hostlist import scontrol_hostnames

STARTS: dict[str, Callable[[], object]] = {
    "subprocess.run": lambda: subprocess.run(["true"], check=False),
    "subprocess.Popen": lambda: subprocess.Popen(["true"]),
    "os.fork": lambda: os.fork(),
    "os.system": lambda: os.system("true"),
    "os.posix_spawn": lambda: os.posix_spawn("/bin/true", ["true"], {}),
    "multiprocessing (fork)": lambda: multiprocessing.get_context("fork").Process().start(),
    "multiprocessing (spawn)": lambda: multiprocessing.get_context("spawn").Process().start(),
}


@pytest.mark.parametrize("start", STARTS.values(), ids=list(STARTS))
def test_every_process_start_is_refused_naming_where_the_test_belongs(
    start: Callable[[], object],
) -> None:
    with pytest.raises(PermissionError, match="move this test to tests/integration"):
        start()


def test_a_probe_of_an_optional_tool_reads_it_as_absent() -> None:
    assert scontrol_hostnames("n[1-2]") is None
