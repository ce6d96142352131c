"""results.csv of `distbench pipeline` (schema v3, v4): one PipelineRow per strategy and number of
microbatches, its step times timed in windows between barriers as ddp's."""

from __future__ import annotations

from dataclasses import dataclass

from distbench.collectors.rows_training import TrainingRow


@dataclass(frozen=True)
class PipelineRow(TrainingRow):
    """One strategy's pipelined training steps at one number of microbatches (TrainingRow's
    columns first)."""

    stage_params: str
    """Parameters per stage, `+`-joined in stage order (the balance of the split)."""
    dtype: str
    batch_size: int
    """Global batch per step (all microbatches together)."""
    microbatches: int
    """M: the batch is cut into M equal microbatches."""
    steps: int
    warmup: int
    window_steps: int
    timer: str
    samples: int
    """Timed windows behind the step_time_us statistics."""
    step_time_us_p50: float
    """Median over windows of the slowest rank's window time / window_steps, in us."""
    step_time_us_mean: float
    """Mean over windows of the same: every rate uses it."""
    step_time_us_min: float
    step_time_us_max: float
    samples_per_s: float
    """batch_size / step_time_us_mean, samples per second."""
    bytes_per_step: int
    """Activations and their gradients crossing stage boundaries per step, computed:
    2 x (W - 1) x batch_size x activation elements per sample x element size."""
    tensor_bytes_per_step: int
    """The bytes of the tensors the stages handed on during the timed steps (outputs forward,
    input gradients backward), counted from the tensors themselves, summed over ranks, / steps:
    bytes_per_step's formula checked against the real shapes. Not a count of what the wire
    carried (the library's own messages are not seen); v3 called it bytes_per_step_measured."""
    bubble: float
    """Measured idle share: mean over stages and windows of 1 - the stage's busy time in the
    window / the slowest rank's window time. Busy: its forwards, backwards, zero_grad and
    optimizer step (v4; v3 counted the optimizer as idle); waiting, sending and the loss are
    idle. On CUDA the busy intervals are timed with CUDA events (v3: synchronize around each)."""
    bubble_p50: float
    """The median over windows of the window's bubble (mean over stages): robust to the windows
    other load disturbed, and not biased low as v3's bubble_min, the least idle window, was."""
    bubble_theory: float
    """GPipe's (W - 1) / (M + W - 1) (also printed next to 1F1B, which has the same bubble)."""
    max_param_diff: float
    """Largest |parameter - a single-process run's| of the same model on the same global batches
    after the same steps (ddp's column: 0 up to rounding)."""
    env: str = ""
    """The --env combination the launch's workers ran with (empty without --env)."""


PIPELINE_CASE_COLUMNS = (
    "primitive", "strategy", "backend", "device", "world_size", "nnodes", "model", "params",
    "dtype", "batch_size", "microbatches", "env",
)  # fmt: skip
"""What a pipeline row measured: two rows are one case when these agree (report, compare)."""
