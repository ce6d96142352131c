"""Reading NCCL's log file (NCCL_DEBUG_FILE, which --nccl-trace sets): whole lines from an offset,
and its warnings copied back into the rank's log.

NCCL_DEBUG_FILE takes every line of NCCL's logger out of stdout, warnings too, so they would no
longer reach the rank's log, which the failure diagnosis reads (launch/diagnose.py). A daemon
thread of every rank copies each `NCCL WARN` line of its NCCL log into the rank's log (file
descriptor 2) within FORWARD_EVERY_S of NCCL writing it (NCCL opens its file line-buffered), and
once more at exit: a rank that dies of an NCCL error still shows NCCL's reason in its log.
"""

from __future__ import annotations

import atexit
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

WARN = "NCCL WARN"
"""What marks a line of NCCL's logger as a warning (src/debug.cc)."""
FORWARD_EVERY_S = 1.0


@dataclass
class WarningForwarder:
    """Copies the `NCCL WARN` lines of one NCCL log to a file descriptor (2: the rank's log)."""

    path: Path
    fd: int = 2
    offset: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def forward(self) -> int:
        """Copy the warnings logged since the last call; how many."""
        with self.lock:
            lines, self.offset = read_lines(self.path, self.offset)
            warnings = [line for line in lines if WARN in line]
            if warnings:
                os.write(self.fd, "".join(f"{line}\n" for line in warnings).encode())
            return len(warnings)

    def run(self) -> None:
        stop = threading.Event()
        while not stop.wait(FORWARD_EVERY_S):
            self.forward()


def read_lines(path: Path | None, offset: int) -> tuple[list[str], int]:
    """The whole lines of `path` from byte `offset` on, and the offset after them (a line NCCL
    is still writing waits for the next read)."""
    if path is None or not path.exists():
        return [], offset
    with open(path, "rb") as handle:
        handle.seek(offset)
        data = handle.read()
    end = data.rfind(b"\n") + 1
    return data[:end].decode("utf-8", "replace").splitlines(), offset + end


def start_forwarding(path: Path) -> WarningForwarder:
    """Copy the warnings of NCCL's log at `path` into this process's stderr from now on."""
    forwarder = WarningForwarder(path)
    atexit.register(forwarder.forward)
    threading.Thread(target=forwarder.run, name="nccl-warnings", daemon=True).start()
    return forwarder
