"""The synthetic models and data of `distbench ddp`: seeded, so every strategy and every rank starts
from the same weights, and each rank trains on its own reproducible shard.

mlp:         (depth - 1) x [Linear(width, width), ReLU], then Linear(width, classes).
             Input [batch, width].
transformer: nn.TransformerEncoder (d_model = width, 4 heads, FFN 4 x width, no dropout,
             depth layers), mean over the sequence, then Linear(width, classes).
             Input [batch, seq, width].
Both end in cross-entropy against random class labels.
"""

from __future__ import annotations

import torch
from torch import nn

from distbench.ddp.spec import TRANSFORMER_HEADS, DdpSpec


class Mlp(nn.Module):
    def __init__(self, width: int, depth: int, classes: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.ReLU()]
        layers.append(nn.Linear(width, classes))
        self.layers = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)  # [batch, width] -> [batch, classes]


class Transformer(nn.Module):
    def __init__(self, width: int, depth: int, classes: int) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(
            d_model=width,
            nhead=TRANSFORMER_HEADS,
            dim_feedforward=4 * width,
            dropout=0.0,  # no randomness in the step: every strategy computes the same thing
            batch_first=True,
        )
        self.encoder = nn.TransformerEncoder(layer, num_layers=depth, enable_nested_tensor=False)
        self.head = nn.Linear(width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(x)  # [batch, seq, width]
        return self.head(hidden.mean(dim=1))  # [batch, classes]


def build_model(spec: DdpSpec, device: torch.device) -> nn.Module:
    """The model with its seeded initial weights, identical on every rank and for every strategy."""
    torch.manual_seed(spec.seed)
    model: nn.Module
    if spec.model == "mlp":
        model = Mlp(spec.width, spec.depth, spec.classes)
    else:
        model = Transformer(spec.width, spec.depth, spec.classes)
    return model.to(device=device, dtype=getattr(torch, spec.dtype))


def build_batches(
    spec: DdpSpec, rank: int, device: torch.device
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Inputs and labels for every step (warm-up included) of this rank's shard, made before any
    timing. Rank r's step s is the same tensor whatever the strategy."""
    generator = torch.Generator().manual_seed(spec.seed * 1_000_003 + rank + 1)
    shape = (
        (spec.batch_size, spec.width)
        if spec.model == "mlp"
        else (spec.batch_size, spec.seq_len, spec.width)
    )
    batches = []
    for _ in range(spec.warmup + spec.steps):
        x = torch.randn(shape, generator=generator, dtype=getattr(torch, spec.dtype))
        y = torch.randint(0, spec.classes, (spec.batch_size,), generator=generator)
        batches.append((x.to(device), y.to(device)))
    return batches
