"""The columns every training row starts with (schema v3): which run, measurement, strategy,
launch and model. DdpRow (schema.py) and PipelineRow (rows_pipeline.py) extend TrainingRow, so
these columns come first in both results.csv files, in this order."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TrainingRow:
    """One strategy's training steps: the columns `distbench ddp` and `distbench pipeline` share."""

    run_id: str
    """The run directory's name, shared by all its rows."""
    label: str
    """The user's --label for the run; empty when not given."""
    host: str
    """Hostname of global rank 0, which wrote the row."""
    measurement: str
    """Key joining this row to its samples in samples.csv (e.g. `ws2/i5`)."""
    primitive: str
    """The workload: always `ddp` in ddp rows, `pipeline` in pipeline rows."""
    strategy: str
    """ddp: ddp, ddp-nocomm, ddp-nooverlap, ddp-bf16, ddp-fp16, grad-avg(-flat), param-avg,
    fsdp(-*); pipeline: sendrecv (GPipe by hand), pipelining (ScheduleGPipe) or
    pipelining-1f1b (Schedule1F1B)."""
    backend: str
    """torch.distributed backend: gloo or nccl."""
    device: str
    """cpu or cuda: where the model trains."""
    world_size: int
    """Ranks training together: ddp, each on its own shard of batch_size samples; pipeline, one
    stage each (rank s runs stage s)."""
    nnodes: int
    """Nodes of the launch."""
    ranks: str
    """The global ranks that took part, e.g. `0-1`."""
    model: str
    """mlp or transformer (ddp/models.py builds both workloads' models)."""
    params: int
    """Trainable parameters of the (whole) model."""
