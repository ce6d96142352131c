"""The send/recv window case keeps one name over every size (issue #26 item 11): the default
window shrinks above 1 MiB (64 messages, then 64 MiB / size) and 0.2.0 named the case after it
(`window=64`, then `window=4` at 16M), which split one line in report and compare. The pattern
now names the setting (`window` for the default, `window=8` for --window 8) and the messages in
flight are the row's own column, window_msgs (schema v4). Plus the terminal table's spread
column (item 9) on the same real 2-rank gloo run."""

from __future__ import annotations

from typing import Any

import torch

from distbench.primitives.base import CaseRequest
from distbench.primitives.send_recv import SendRecv
from tests.unit.comm.test_sendrecv import context


def patterns(size: int, options: dict[str, Any]) -> list[tuple[str, float]]:
    cases = SendRecv().build_cases(context(2), CaseRequest(size, torch.uint8, "sum", "0", options))
    return [(c.labels["pattern"], c.columns.get("window_msgs", -1.0)) for c in cases]


def test_the_default_window_keeps_its_name_as_it_shrinks() -> None:
    every = {"patterns": ["pingpong", "window", "multipair"]}
    assert patterns(1 << 20, every) == [
        ("pingpong", -1.0),
        ("window", 64.0),
        ("multipair-window", 64.0),
    ]
    assert patterns(16 << 20, every) == [
        ("pingpong", -1.0),
        ("window", 4.0),
        ("multipair-window", 4.0),
    ]
    bidir = {"patterns": ["window"], "bidirectional": True}
    assert patterns(64 << 20, bidir) == [("bidir-window", 1.0)]


def test_a_given_window_is_named_and_never_shrinks() -> None:
    given = {"patterns": ["window"], "window": 8}
    assert patterns(1024, given) == [("window=8", 8.0)]
    assert patterns(64 << 20, given) == [("window=8", 8.0)]
