"""`ddp --strategies dp` (nn.DataParallel) needs 2+ CUDA GPUs: on this CPU machine it is refused
with one line and exit 2, before anything is launched; and it is never part of 'all'."""

from __future__ import annotations

from pathlib import Path

import pytest

from distbench.ddp.spec import STRATEGIES, DdpSpec
from tests.conftest import usage_error_line


def test_dp_refused_without_two_gpus(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    line = usage_error_line(["ddp", "--strategies", "ddp,dp", "--out", str(out)], capsys)
    assert "needs at least 2 CUDA GPUs" in line and "this machine has 0" in line
    assert not out.exists()  # nothing was launched, no run directory made


def test_dp_named_only() -> None:
    assert "dp" not in STRATEGIES  # 'all' and the default
    assert [run.strategy for run in DdpSpec(strategies=("dp", "ddp")).runs()] == ["ddp", "dp"]
