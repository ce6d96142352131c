"""The ports init's groups and rpc's store listen at: drawn outside the kernel's ephemeral range,
where a concurrent process's bind(0) or outgoing connection can take them between the pick and
the listen (CI's examples test ran `distbench init` beside `distbench rpc`: TensorPipe took one of
init's ports; init's rank 0 failed and rpc's ranks aborted)."""

from __future__ import annotations

import socket
from pathlib import Path

from distbench.ports import EPHEMERAL_ELSEWHERE, LOWEST, ephemeral_range, free_ports


def test_ports_are_distinct_free_and_outside_the_kernels_ephemeral_range() -> None:
    low, high = ephemeral_range()
    ports = free_ports(40)
    assert len(set(ports)) == 40
    assert all(p >= LOWEST and not low <= p <= high for p in ports), ports
    for port in ports:  # free again once returned: a store can listen there
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("", port))


def test_two_draws_differ() -> None:
    """Random, not the first free port from the bottom: two runs picking at once would collide."""
    assert free_ports(5) != free_ports(5)


def test_a_port_in_use_is_skipped() -> None:
    """Every port but a few held: the draw returns only ones it could bind."""
    ephemeral = (LOWEST + 1_003, 65_535)  # leaves LOWEST .. LOWEST+1002 to draw from
    held: list[socket.socket] = []
    try:
        for port in range(LOWEST, LOWEST + 1_003):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                sock.bind(("", port))
            except OSError:
                sock.close()  # taken by someone else already: just as good
                continue
            if port % 100 == 0:
                sock.close()  # leave these free
                continue
            held.append(sock)
        ports = free_ports(3, ephemeral)
        assert all(p % 100 == 0 and LOWEST <= p < LOWEST + 1_003 for p in ports), ports
    finally:
        for sock in held:
            sock.close()


def test_a_narrow_outside_falls_back_to_the_kernels_choice() -> None:
    low, high = ephemeral_range()
    ports = free_ports(3, (LOWEST + 10, 65_535))  # 10 ports outside: too few to draw from
    assert len(set(ports)) == 3
    assert all(low <= p <= high for p in ports), ports


def test_ephemeral_range_reads_proc_and_falls_back(tmp_path: Path) -> None:
    path = tmp_path / "ip_local_port_range"
    path.write_text("40000\t50000\n")
    assert ephemeral_range(path) == (40_000, 50_000)
    assert ephemeral_range(tmp_path / "absent") == EPHEMERAL_ELSEWHERE
    path.write_text("garbage\n")
    assert ephemeral_range(path) == EPHEMERAL_ELSEWHERE
