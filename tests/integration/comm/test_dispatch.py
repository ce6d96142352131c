"""dispatch_bound (#30). The half that launches or runs for seconds; the in-process half, and the
file's whole story: tests/unit/comm/test_dispatch.py."""

from __future__ import annotations

import math
from pathlib import Path

import torch

from distbench.comm.dispatch import (
    host_enqueue_us,
)
from distbench.primitives.base import Context
from tests.conftest import run_on_gloo_ranks


def enqueue_on_gloo(rank: int, world_size: int) -> float:
    ctx = Context(rank, world_size, torch.device("cpu"), "gloo", None, (0, 1))
    return host_enqueue_us(ctx, lambda: None)


def test_gloo_measures_no_enqueue_time(tmp_path: Path) -> None:
    """gloo's calls complete before they return: their host time is the op, not a dispatch."""
    assert all(math.isnan(t) for t in run_on_gloo_ranks(enqueue_on_gloo, 2, tmp_path / "s"))
