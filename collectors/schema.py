"""The columns of a run directory's CSV files: one dataclass per file, units in the names.

Every file of a run carries `SCHEMA_VERSION` in its manifest. A report or compare that finds another
version refuses it with a clear message rather than guessing.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

SCHEMA_VERSION = 1

RESULTS_CSV = "results.csv"
SAMPLES_CSV = "samples.csv"
MANIFEST_JSON = "manifest.json"

# samples.csv: rank -1 holds the per-sample maximum over ranks, the input of every statistic.
MAX_OVER_RANKS = -1


@dataclass(frozen=True)
class ResultRow:
    """One measurement of one primitive: one row of results.csv."""

    run_id: str
    label: str
    host: str
    measurement: str
    """Key joining this row to its samples in samples.csv (e.g. `ws2/i5`)."""
    primitive: str
    """torch's name: all_reduce, broadcast, all_gather, reduce_scatter, all_to_all, reduce,
    send_recv (and ddp for training-step rows)."""
    backend: str
    device: str
    world_size: int
    nnodes: int
    ranks: str
    """The global ranks that took part, e.g. `0-1` (a subgroup when smaller than the launch)."""
    dtype: str
    op: str
    """Reduction op for reducing primitives, empty otherwise."""
    size_bytes: int
    """nccl-tests' size: one rank's buffer, or the whole gathered buffer for gather-type ones."""
    requested_bytes: int
    """The size asked for; differs from size_bytes when rounded down to whole elements."""
    count: int
    """Elements in size_bytes."""
    root: str
    src: str
    dst: str
    pattern: str
    """How the primitive was driven, e.g. `ring`, `pingpong`, `window=64`; empty otherwise."""
    mode: str
    """throughput (back-to-back ops, one drain) or latency (each op isolated by a barrier)."""
    timer: str
    """cuda_event or perf_counter (host clock after the op completed)."""
    iters: int
    warmup: int
    trials: int
    samples: int
    """Samples behind the statistics (trials in throughput mode, trials x iters in latency mode)."""
    time_us_p50: float
    time_us_mean: float
    time_us_min: float
    time_us_max: float
    time_us_p95: float
    time_us_p99: float
    time_us_std: float
    algbw_GBps: float
    """size_bytes / time_us_p50, GB/s = 1e9 bytes/s."""
    busbw_GBps: float
    """algbw_GBps x busbw_factor (nccl-tests' convention)."""
    busbw_factor: float
    wrong: int
    """Wrong elements found by --check; -1 when not checked."""


@dataclass(frozen=True)
class SampleRow:
    """One timing sample: one row of samples.csv."""

    measurement: str
    rank: int
    """Global rank, or -1 for the maximum over ranks (the sample the statistics use)."""
    trial: int
    iter: int
    """Iteration within the trial in latency mode; -1 in throughput mode (one sample per trial)."""
    time_us: float
    loss: float = float("nan")
    """Training loss at this step (DDP rows); empty for communication samples."""


@dataclass(frozen=True)
class DdpRow:
    """One training-step measurement of one strategy: one row of a `distbench ddp` results.csv."""

    run_id: str
    label: str
    host: str
    measurement: str
    primitive: str
    """Always `ddp`."""
    strategy: str
    """ddp, ddp-nocomm, ddp-bf16, ddp-fp16, grad-avg, grad-avg-flat, param-avg."""
    backend: str
    device: str
    world_size: int
    nnodes: int
    ranks: str
    model: str
    """mlp or transformer."""
    params: int
    """Trainable parameters of the model."""
    dtype: str
    batch_size: int
    """Samples per rank per step."""
    bucket_mb: str
    """DDP bucket_cap_mb (empty for manual strategies)."""
    gradient_as_bucket_view: str
    static_graph: str
    avg_every: str
    """param-avg's K (empty for other strategies)."""
    steps: int
    """Timed steps."""
    warmup: int
    timer: str
    samples: int
    step_time_us_p50: float
    step_time_us_mean: float
    step_time_us_min: float
    step_time_us_max: float
    step_time_us_p95: float
    step_time_us_p99: float
    step_time_us_std: float
    samples_per_s: float
    """Whole job: world_size x batch_size / p50 step time."""
    scaling_efficiency: float
    """samples_per_s at n ranks / (n x samples_per_s at one rank); empty without a 1-rank row."""
    comm_bytes_per_step: int
    """Bytes each rank reduces per step (gradients or parameters, after compression)."""
    comm_busbw_GBps: float
    """The all_reduce busbw those bytes imply over the communication time (step - ddp-nocomm)."""
    comm_share: float
    """(step p50 - ddp-nocomm p50) / step p50: the step's fraction spent communicating."""
    overlap: float
    """Share of grad-avg's exposed communication that this strategy hid (see README)."""
    max_param_diff: float
    """Largest |parameter - ddp's parameter| after the same steps on the same data."""


COMM_CASE_COLUMNS = (
    "primitive",
    "backend",
    "device",
    "world_size",
    "nnodes",
    "dtype",
    "op",
    "mode",
    "root",
    "src",
    "dst",
    "pattern",
)
"""What a communication row measured, apart from its size: rows of two runs (compare, report)
match on these and size_bytes."""

DDP_CASE_COLUMNS = (
    "strategy",
    "backend",
    "device",
    "world_size",
    "nnodes",
    "model",
    "params",
    "dtype",
    "batch_size",
    "bucket_mb",
    "gradient_as_bucket_view",
    "static_graph",
    "avg_every",
)
"""What a DDP row measured: rows of two runs match on these."""


def column_names(row_type: type) -> list[str]:
    """The CSV header of a row dataclass, in declaration order."""
    return [f.name for f in fields(row_type)]
