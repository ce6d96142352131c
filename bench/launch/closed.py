"""A closed output: the reader of stdout or stderr has left (`distbench ... | head`). What a
BrokenPipeError of ours means, and how to stop writing to such a stream without raising again.
launch/run.py treats it as an interruption; the CLI keeps a verdict's exit code through it."""

from __future__ import annotations

import os
import select
import sys
from typing import Any

EXIT_PIPE = 141
"""The output was closed (`distbench ... | head`): 128 + SIGPIPE, as a shell reports it."""


def reader_left(stream: Any) -> bool:
    """True when `stream` is a pipe whose reader has closed it (poll: POLLERR on its end)."""
    try:
        poller = select.poll()
        poller.register(stream.fileno(), select.POLLOUT)
        return any(event & (select.POLLERR | select.POLLHUP) for _fd, event in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def flushes(stream: Any) -> bool:
    """Whether what `stream` holds can still be written (False: its reader left)."""
    try:
        stream.flush()
    except (BrokenPipeError, ValueError):
        return False
    except OSError:
        return True  # another error (a full disk) is not a closed output
    return True


def closed(stream: Any) -> bool:
    """Whether `stream`'s reader has left: poll says so (Linux), or a flush fails (anywhere)."""
    return reader_left(stream) or not flushes(stream)


def output_closed() -> bool:
    """Whether stdout's or stderr's reader has left (what a BrokenPipeError of ours means)."""
    return any(closed(stream) for stream in (sys.stdout, sys.stderr))


def silence_closed_outputs() -> None:
    """Point stdout and stderr, where their reader has left, at /dev/null: what is still
    buffered, and every later print, goes nowhere instead of raising BrokenPipeError again
    (Python's advice for SIGPIPE: docs.python.org/3/library/signal.html#note-on-sigpipe)."""
    for stream in (sys.stdout, sys.stderr):
        if closed(stream):
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, stream.fileno())
                os.close(devnull)
            except (OSError, ValueError):
                pass
