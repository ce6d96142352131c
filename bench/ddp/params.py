"""Model sizes from parameter counts, without torch: `--params 10M` becomes a width the CLI puts in
the DdpSpec (models.py builds the model of that shape on the ranks)."""

from __future__ import annotations

from distbench.ddp.spec import TRANSFORMER_HEADS
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
