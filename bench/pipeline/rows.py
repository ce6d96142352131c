"""Rank 0's rows of `distbench pipeline`: one PipelineRow per measurement and its samples (one
per window: the slowest rank's window / steps, rank -1 as every distbench statistic's input)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from distbench.collectors.rows_pipeline import PipelineRow
from distbench.ddp.rows import training_columns, window_columns
from distbench.pipeline.spec import PipelineSpec, bubble_theory, unit_params
from distbench.pipeline.stages import stage_bounds
from distbench.primitives.base import Context
from distbench.spec import RunSpec
from distbench.stats import Stats


@dataclass(frozen=True)
class Measured:
    """One (strategy, M) measurement, identical on every rank once gathered."""

    strategy: str
    microbatches: int
    window_steps: int
    max_window_us: list[float]
    """Per window, the slowest rank's window time (us)."""
    bubble: float
    bubble_p50: float
    """The median over windows of the window's bubble (mean over stages)."""
    sent_bytes: int
    """Bytes of the tensors every stage handed on during the timed steps, summed over ranks."""
    max_param_diff: float
    measurement: str = ""

    def with_diff(self, measurement: str, diff: float) -> Measured:
        return replace(self, measurement=measurement, max_param_diff=diff)

    @property
    def window_step_us(self) -> list[float]:
        return [t / self.window_steps for t in self.max_window_us]


def activation_elements(spec: PipelineSpec) -> int:
    """Elements per sample crossing one stage boundary: width (mlp) or seq_len x width."""
    return spec.width if spec.model == "mlp" else spec.seq_len * spec.width


def bytes_per_step(spec: PipelineSpec, stages: int, itemsize: int = 4) -> int:
    """Activations forward and their gradients backward over the W - 1 boundaries, per step."""
    return 2 * (stages - 1) * spec.batch_size * activation_elements(spec) * itemsize


def stage_params(spec: PipelineSpec, stages: int) -> str:
    counts = unit_params(spec.model, spec.width, spec.depth, spec.classes)
    return "+".join(str(sum(counts[a:b])) for a, b in stage_bounds(spec, stages))


def build_row(spec: RunSpec, ctx: Context, workload: PipelineSpec, m: Measured) -> PipelineRow:
    stats = Stats(tuple(m.window_step_us))
    steps = workload.steps
    return PipelineRow(
        **training_columns(spec, ctx, m.measurement, "pipeline", m.strategy),
        model=workload.model,
        params=sum(unit_params(workload.model, workload.width, workload.depth, workload.classes)),
        stage_params=stage_params(workload, ctx.world_size),
        dtype="float32",
        batch_size=workload.batch_size,
        microbatches=m.microbatches,
        **window_columns(PipelineRow, steps, workload.warmup, m.window_steps, ctx, stats),
        samples_per_s=workload.batch_size / (stats.mean * 1e-6) if stats.mean > 0 else math.nan,
        bytes_per_step=bytes_per_step(workload, ctx.world_size),
        tensor_bytes_per_step=round(m.sent_bytes / steps),
        bubble=m.bubble,
        bubble_p50=m.bubble_p50,
        bubble_theory=bubble_theory(ctx.world_size, m.microbatches),
        max_param_diff=m.max_param_diff,
        env=spec.env_label,
    )
