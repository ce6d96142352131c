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
from distbench.parse import UsageError


def param_count(model: str, width: int, depth: int, classes: int = 10) -> int:
    """Trainable parameters of a model, computed from its shape (build_model agrees)."""
    head = width * classes + classes
    if model == "mlp":
        return (depth - 1) * (width * width + width) + head
    # Per encoder layer: attention in/out projections 4w^2 + 4w, FFN 8w^2 + 5w, two LayerNorms 4w.
    return depth * (12 * width * width + 13 * width) + head


def width_for_params(model: str, depth: int, target: int, classes: int = 10) -> int:
    """The width whose parameter count is closest to `target` (a multiple of the heads for the
    transformer); the smaller width on a tie."""
    step = TRANSFORMER_HEADS if model == "transformer" else 1
    low, high = 1, 1
    while param_count(model, high * step, depth, classes) < target:
        high *= 2
    while low < high:  # the smallest multiple whose count reaches the target
        middle = (low + high) // 2
        if param_count(model, middle * step, depth, classes) < target:
            low = middle + 1
        else:
            high = middle
    candidates = [w * step for w in (low - 1, low) if w >= 1]
    width = min(candidates, key=lambda w: (abs(param_count(model, w, depth, classes) - target), w))
    return width


def parse_param_count(text: str) -> int:
    """'10M' -> 10_000_000. Parameter counts are decimal: K = 1e3, M = 1e6, G or B = 1e9."""
    value = text.strip()
    units = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "b": 10**9}
    unit = value[-1:].lower() if value[-1:].isalpha() else ""
    number = value[: len(value) - len(unit)]
    hint = "use a count with an optional K, M or G suffix (decimal: 10M = 10,000,000), e.g. 10M"
    try:
        count = float(number) * units[unit]
    except (ValueError, KeyError):
        raise UsageError(f"--params '{text}' is not a parameter count: {hint}") from None
    if not count >= 1 or count != count:
        raise UsageError(f"--params must be at least 1, got '{text}': {hint}")
    return round(count)


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
