"""The pipeline's bubble (#25 §11, #30). The half that launches or runs for seconds; the in-process
half, and the file's whole story: tests/unit/pipeline/test_pipeline_bubble.py."""

from __future__ import annotations

import time
from pathlib import Path

import torch

from tests.conftest import run_on_gloo_ranks

SLOW_STEP_S = 0.2


def bubbles_with_a_slow_optimizer(rank: int, world_size: int) -> tuple[float, float]:
    """One stage (the whole small model) trained by `measure`, with plain SGD, then with SGD.step
    slowed by 200 ms (a test-side subclass, in this forked rank only): both bubbles."""
    from distbench.ddp.models import build_batches
    from distbench.pipeline import runner
    from distbench.pipeline.spec import PipelineSpec
    from distbench.primitives.base import Context

    class SlowSGD(torch.optim.SGD):
        def step(self, closure=None):  # type: ignore[no-untyped-def, override]
            time.sleep(SLOW_STEP_S)
            return super().step(closure)

    spec = PipelineSpec(
        strategies=("sendrecv",), width=32, depth=2, batch_size=8, steps=3, warmup=1,
        microbatches=(1,), window_steps=1,
    )  # fmt: skip
    ctx = Context(rank, world_size, torch.device("cpu"), "gloo", None, (0,))
    batches = build_batches(spec.model_spec(), 0, ctx.device)
    plain, _ = runner.measure("sendrecv", 1, spec, ctx, batches)
    torch.optim.SGD = SlowSGD  # type: ignore[misc]
    slow, _ = runner.measure("sendrecv", 1, spec, ctx, batches)
    return plain.bubble, slow.bubble


def test_the_optimizer_step_is_busy_not_bubble(tmp_path: Path) -> None:
    """A slower optimizer makes a stage busier, never idler: v3 counted the 200 ms step as idle,
    and its bubble rose by 0.3 or more (0.2 s of 0.2-0.6 s windows, on this box under load)."""
    ((plain, slow),) = run_on_gloo_ranks(bubbles_with_a_slow_optimizer, 1, tmp_path / "store")
    assert slow < plain + 0.1, (plain, slow)
