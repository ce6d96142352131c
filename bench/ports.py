"""Ports for the rendezvous a run opens itself (init's fresh groups, rpc's store).

Rank 0 picks them, shares them, and only later does a store listen there, so a port must stay
free in between. A port the kernel hands out for bind(0) or an outgoing connection comes from its
ephemeral range, where any process (gloo's and TensorPipe's listeners, every client socket) may
take it next: a port picked by bind(0) was taken by a concurrent run's TensorPipe listener, whose
peers then read our store's bytes and aborted. So ports are drawn at random from outside that
range, where only an explicit bind lands, and each is checked free.
"""

from __future__ import annotations

import random
import socket
from contextlib import ExitStack
from pathlib import Path

LOWEST = 10_000
"""Below this sit well-known and registered services' ports; never drawn."""

EPHEMERAL_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
EPHEMERAL_ELSEWHERE = (49_152, 65_535)
"""IANA's dynamic range, macOS's and Windows' ephemeral range, where /proc has no answer."""


def ephemeral_range(path: Path = EPHEMERAL_FILE) -> tuple[int, int]:
    """The kernel's ephemeral ports, both ends included."""
    try:
        low, high = (int(word) for word in path.read_text().split()[:2])
    except (OSError, ValueError):
        return EPHEMERAL_ELSEWHERE
    return low, high


def candidate_ports(ephemeral: tuple[int, int]) -> list[int]:
    """Every port from LOWEST up that the kernel never hands out on its own."""
    low, high = ephemeral
    return [p for p in range(LOWEST, 65_536) if not low <= p <= high]


def free_ports(count: int, ephemeral: tuple[int, int] | None = None) -> list[int]:
    """`count` distinct ports free now, outside the ephemeral range (held open together while
    drawing, so none repeats); bind(0)'s where that range leaves fewer than 1,000 outside it."""
    pool = candidate_ports(ephemeral or ephemeral_range())
    if len(pool) < 1_000:
        pool = []  # a range this narrow would soon run dry: let the kernel choose
    draw = random.SystemRandom()  # independent of any seed a user or torch set
    with ExitStack() as stack:
        ports: list[int] = []
        while len(ports) < count:
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            try:
                sock.bind(("", pool.pop(draw.randrange(len(pool))) if pool else 0))
            except OSError:
                continue  # in use: draw another
            ports.append(sock.getsockname()[1])
    return ports
