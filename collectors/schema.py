"""The columns of a run directory's CSV files: one dataclass per file, units in the names.

Every run carries `SCHEMA_VERSION` in its manifest. Runs of every older version load: MIGRATIONS
(migrations.py) says, per version, which columns were added (with the value an older run gets),
which were removed, and which kept their name but changed meaning. compare and report never set
two numbers side by side across a changed meaning (`changed_meaning`); a run of a newer version is
refused with one line. docs/upgrading.md explains each version to users.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from distbench.collectors.rows_training import TrainingRow

# the run directory's names live in rundir.py; importers may take them from here
from distbench.collectors.rundir import (  # noqa: F401
    LOGS_DIR,
    MANIFEST_JSON,
    RANKS_CSV,
    RESULTS_CSV,
    SAMPLES_CSV,
    SPEC_JSON,
    backend_spec_path,
    heartbeat_path,
    node_dir,
    progress_path,
    rank_log_path,
    rank_map_path,
    torchrun_log_path,
    worker_env_path,
    worker_facts_path,
)

SCHEMA_VERSION = 4

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
    """The torchrun nodes the row's ranks span (a subgroup on one node: 1, whatever --nnodes)."""
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
    """broadcast, reduce, gather: the root's rank in the row's group (--root; one row per root
    with --root all); empty for the others."""
    src: str
    """send_recv: the group rank that sends first (pingpong and window: one rank; multipair: the
    senders, e.g. `0-1`; ring: `all`); empty for collectives."""
    dst: str
    """send_recv: the group rank that receives and answers (ring: `next`, each rank's right-hand
    neighbour; multipair: the receivers); empty for collectives."""
    pattern: str
    """How the primitive was driven, e.g. `ring`, `pingpong`, `window=64`; empty otherwise."""
    mode: str
    """throughput (back-to-back ops, one drain) or latency (each op isolated by a barrier)."""
    timer: str
    """perf_counter (host clock after the op completed), cuda_event (CUDA events around
    back-to-back ops, as nccl-tests), cuda_event+dispatch (around one isolated op, its host
    dispatch included: CUDA latency mode) or cuda_event+graph (--cuda-graph: nccl-tests -G)."""
    iters: int
    """Ops per trial: --iters, or as many as fill --trial-time with --iters auto (throughput mode
    times them back to back, latency mode one at a time)."""
    warmup: int
    trials: int
    """Timed trials asked for (--trials); with --precision the first ones, and trials_run says
    how many ran."""
    samples: int
    """Samples behind the statistics (trials in throughput mode, trials x iters in latency mode)."""
    time_us_p50: float
    """The median of the row's samples (samples.csv, rank -1), µs. A sample is the slowest rank's
    time: in throughput mode one trial's time per op (its `iters` back-to-back ops, one drain,
    divided by iters), in latency mode one op's. Linear interpolation between closest ranks."""
    time_us_mean: float
    """The mean of the same samples, µs."""
    time_us_min: float
    """The fastest of the same samples, µs (the nightly gate's metric: what other work on a shared
    box disturbs least)."""
    time_us_max: float
    """The slowest of the same samples, µs."""
    time_us_p95: float
    """Latency mode only; empty in throughput mode, where a sample is a mean of `iters` ops."""
    time_us_p99: float
    """Latency mode only, as time_us_p95."""
    time_us_std: float
    """The samples' standard deviation (n - 1), µs; 0 with one sample."""
    algbw_GBps: float
    """size_bytes / time_us_p50, GB/s = 1e9 bytes/s; empty at world size 1 (nothing moves)."""
    busbw_GBps: float
    """algbw_GBps x busbw_factor (nccl-tests' convention); empty at world size 1."""
    busbw_factor: float
    """busbw_GBps / algbw_GBps at this world size n: nccl-tests' factor for the primitive, e.g.
    all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all(v), gather (n-1)/n; broadcast,
    reduce and send_recv 1."""
    wrong: int
    """Wrong elements found by --check; -1 when not checked."""
    hosts: str = ""
    """The row's ranks' hosts, `+`-separated, one per node in node order (v2; empty in v1)."""
    ci_low_us: float = float("nan")
    """Low end of the 95 % confidence interval of time_us_p50, the trial as the unit (v4): one
    sample a trial (throughput), the order-statistic interval of a median interpolated to 95 %,
    from 6 trials; several (latency: `iters` ops a trial), Woodruff's interval over the trials,
    its variance a long-run one over the trials in their order (a drifting box makes consecutive
    trials alike), from 6 trials when they agree well enough, and with --precision the p50's
    95 % confidence sequence over the trials (valid at the trial --precision stopped at), from
    7 trials; empty otherwise (v3: the binomial interval over every sample, ops of one trial
    counted as independent; empty before v3). What no interval over one launch's trials sees:
    drift slower than all of them; latency rows of this project's shared box held the launch's
    p50 89.2-92.5 % of the time at 12 sequential trials, 95.1-97.5 % with --order interleaved
    (docs/measurement.md)."""
    ci_high_us: float = float("nan")
    """High end of that interval (v4 as ci_low_us; v3: the binomial interval; empty before)."""
    trials_run: int = 0
    """Trials run: `trials`, or as many as --precision took (v3; empty before: `trials`)."""
    converged: str = ""
    """With --precision: true when the p50 came within +-precision (v4): in latency mode (several
    ops a trial) when its 95 % confidence sequence over trials did, at any trial from the 7th
    (the row prints it); with one sample a trial when its 99 % interval over trials did at 3
    looks in a row, one every 2 trials from the 10th (the row prints the 95 % one, narrower
    still); false when --max-trials or --budget ended the measurement first; empty without
    --precision (v3: the 95 % interval, over ops in latency mode)."""
    nccl_algo: str = ""
    """The algorithm NCCL chose (RING, TREE, NVLS, COLLNET_DIRECT ...), from its TUNING log with
    --nccl-trace (whose logging stays on in the timed loop); empty on gloo, without it, or
    when the log's format is unknown (v3)."""
    nccl_proto: str = ""
    """The protocol NCCL chose (LL, LL128, SIMPLE), as nccl_algo (v3)."""
    nccl_nchannels: str = ""
    """Channels NCCL used (channel{Lo..Hi}: Hi - Lo + 1), as nccl_algo; empty with older NCCL."""
    trial_order: str = "sequential"
    """sequential; grouped (trial t of each of 3 consecutive measurements in round t, group after
    group: --order auto's choice in latency mode, v4); or interleaved (--order: trial t of every
    measurement in round t); v3."""
    env: str = ""
    """The --env combination the launch's workers ran with, `NAME=V ...` (e.g. `NCCL_ALGO=Ring`);
    part of the case: rows of two combinations are two lines (v3; empty before and without)."""
    api: str = "c10d"
    """The interface that issued the op (--api): c10d, functional (torch's functional collectives,
    eagerly, then wait_tensor) or compiled:BACKEND (a torch.compile'd function of them, backend
    inductor or aot_eager); part of the case (v3; c10d before)."""
    compile_s: float = float("nan")
    """compiled: seconds the case's compiled function took to compile (its first call, which runs
    the collective once; rank 0), outside every timed region; empty otherwise (v3)."""
    msg_rate_per_s: float = float("nan")
    """send_recv: messages per second, 1e6 / time_us_p50 (time per message); multipair: of all
    pairs together (osu_mbw_mr's message rate). Empty for collectives and at world size 1 (v3)."""
    placement: str = "out"
    """in: nccl-tests' in-place form (all_gather, reduce_scatter, all_to_all; --placement); out:
    separate buffers, and every other row, as before v3 (all_reduce's API has one form)."""
    send_bytes_min: float = float("nan")
    """all_to_allv: the fewest bytes a rank sent (v3; empty for other primitives)."""
    send_bytes_max: float = float("nan")
    """all_to_allv: the most bytes a rank sent (v3)."""
    recv_bytes_min: float = float("nan")
    """all_to_allv: the fewest bytes a rank received (v3)."""
    recv_bytes_max: float = float("nan")
    """all_to_allv: the most bytes a rank received (v3)."""
    imbalance: float = float("nan")
    """all_to_allv: the busiest rank's bytes (sent or received) / the mean per rank (v3)."""
    graph: str = "false"
    """true: timed as replays of a CUDA graph (--cuda-graph; timer cuda_event+graph); v3."""
    buffers: str = "regular"
    """symmetric: the timed buffers were symmetric memory (--buffers symmetric); v3, regular."""
    nccl_symmetric: str = ""
    """true: NCCL served the row's calls with its symmetric kernels (its log's `[Symmetric]`
    lines; nccl_algo then names the kernel), false: with its regular ones, as nccl_algo (v4).
    From --nccl-trace, which --buffers symmetric turns on; empty without a trace or on gloo."""
    enqueue_us: float = float("nan")
    """nccl: the host's time to issue one op onto an idle stream (torch's dispatch + NCCL's
    enqueue), median of 5 calls after the warm-up, slowest rank; under --cuda-graph one replay's
    host time / iters. Empty on gloo, whose calls complete before they return (v4)."""
    dispatch_bound: str = ""
    """true when time_us_p50 < 2 x enqueue_us: the GPU waited for the host, so the row measures
    the per-call host cost, not NCCL; --cuda-graph N removes it. false above; empty with
    enqueue_us (v4)."""
    window_msgs: float = float("nan")
    """send_recv window and multipair patterns, and `distbench pairs`' send/recv rows
    (`pairs:bidir-window`): the messages in flight per window (--window W;
    without it 64 up to 1 MiB messages, then 64 MiB / size). The pattern names the setting only
    (`window`, or `window=W` with --window), so a case keeps one name over its sizes (v3 named
    the default window's count, `window=64` then `window=4` at 16M). Empty for other rows (v4)."""


@dataclass(frozen=True)
class SampleRow:
    """One timing sample: one row of samples.csv."""

    measurement: str
    rank: int
    """Global rank, or -1 for the maximum over ranks (the sample the statistics use)."""
    trial: int
    """The trial, from 0 in the order they ran (with --order interleaved, round by round)."""
    iter: int
    """Iteration within the trial in latency mode; -1 in throughput mode (one sample per trial)."""
    time_us: float
    """This sample's time, µs: one trial's time per op (throughput mode) or one op's (latency
    mode), on `rank`; at rank -1 the slowest rank's, which the row's statistics are taken over."""
    loss: float = float("nan")
    """Training loss at this step (DDP rows); empty for communication samples."""
    run_id: str = ""
    """The run the sample belongs to, so samples of several runs can be concatenated (v2)."""


@dataclass(frozen=True)
class DdpRow(TrainingRow):
    """One strategy's training steps, timed in windows between barriers: a ddp results.csv row
    (TrainingRow's columns first)."""

    dtype: str
    """Parameter and gradient dtype (float32)."""
    batch_size: int
    """Samples per rank per step."""
    bucket_mb: str
    """DDP bucket_cap_mb in MB (empty for manual strategies)."""
    gradient_as_bucket_view: str
    """DDP's gradient_as_bucket_view: true or false (empty for manual strategies)."""
    static_graph: str
    """DDP's static_graph: true or false (empty for manual strategies)."""
    avg_every: str
    """param-avg's K: parameters averaged after every K-th step (empty for other strategies)."""
    steps: int
    """Timed steps (warm-up excluded): window_steps x samples."""
    warmup: int
    """Untimed steps before the timed ones."""
    window_steps: int
    """Timed steps per window: the steps between two barriers, timed as one sample (v2)."""
    timer: str
    """cuda_event (CUDA events at the step boundaries) or perf_counter (host clock)."""
    samples: int
    """Timed windows behind the step_time_us statistics (v1: timed steps)."""
    step_time_us_p50: float
    """Median over windows of the slowest rank's window time / window_steps, in us."""
    step_time_us_mean: float
    """Sum over windows of the slowest rank's window time / steps, in us: every rate uses it."""
    step_time_us_min: float
    """Fastest window's step time (slowest rank's window / window_steps), in us."""
    step_time_us_max: float
    """Slowest window's step time (slowest rank's window / window_steps), in us."""
    step_time_us_p95: float
    """95th percentile over windows of the step time, in us (of window means: no per-step tail)."""
    step_time_us_p99: float
    """99th percentile over windows of the step time, in us (window means, as p95)."""
    step_time_us_std: float
    """Sample standard deviation over windows of the step time, in us."""
    samples_per_s: float
    """Whole job: world_size x batch_size / step_time_us_mean, samples per second."""
    scaling_efficiency: float
    """samples_per_s at n ranks / (n x samples_per_s of the run's 1-rank row); empty without one."""
    comm_bytes_per_step: int | None
    """Bytes each rank reduces per step, after compression (param-avg: / K; fsdp*: AG + RS).
    Empty at world size 1, where nothing crosses a link (v4), as comm_busbw_GBps."""
    comm_busbw_GBps: float
    """Bus bandwidth, GB/s (1e9 B/s), of comm_bytes_per_step in (step mean - comm_baseline's
    mean), by nccl-tests' factor: all_reduce's 2(n-1)/n; fsdp*, all_gather's and
    reduce_scatter's (n-1)/n. An upper bound where communication overlaps. Empty at world size 1
    (v4: the strategy's own baseline; v3 subtracted ddp-nocomm's from every strategy)."""
    comm_share: float
    """(step mean - comm_baseline's mean) / step mean: exposed communication share; empty at 1
    rank (v4: the strategy's own baseline, as comm_busbw_GBps)."""
    comm_hidden_share: float
    """1 - (step - ddp-nocomm) / (ddp-nooverlap - ddp-nocomm), mean step times, same bucket size
    (v2): the share of the communication hidden behind compute. ddp-nooverlap sends ddp's messages
    with none overlapped (0 by definition). ddp and ddp-nooverlap only; empty at world size 1.
    Not clamped: below 0 where ddp's step was slower than ddp-nooverlap's (overlapping cost more
    than it hid: compute and communication contend for the same cores, as gloo on a CPU box
    does, or noise), above 1 where it was faster than ddp-nocomm's (noise)."""
    max_param_diff: float
    """Largest |parameter - the first ddp run's| after the same steps on the same data."""
    env: str = ""
    """The --env combination the launch's workers ran with, as ResultRow's env (v3)."""
    allgather_bytes_per_step: int | None = 0
    """fsdp*: bytes all-gathered per step (unsharded size, padded; 0 for other strategies; v3).
    Empty at world size 1 (v4), as comm_bytes_per_step."""
    reduce_scatter_bytes_per_step: int | None = 0
    """fsdp*: bytes reduce-scattered per step (unsharded size, padded; 0 otherwise; v3). Empty at
    world size 1 (v4), as comm_bytes_per_step."""
    peak_mem_bytes: float = float("nan")
    """Largest rank's peak memory of the steps above its pre-model baseline, by mem_source (v3)."""
    mem_source: str = ""
    """cuda_max_allocated or rss_hwm (CPU resident-set high-water mark); empty: unmeasured (v3).
    dp rows: cuda_max_allocated of the busiest of the GPUs nn.DataParallel drives (v4)."""
    comm_baseline: str = "ddp-nocomm"
    """The strategy whose mean step comm_share and comm_busbw_GBps subtract: ddp-nocomm for DDP's
    strategies, local (the plain model, nothing sent) for grad-avg, grad-avg-flat, param-avg,
    fsdp and fsdp-reshard-false; empty for dp (v4; every v3 row subtracted ddp-nocomm's)."""


COMM_CASE_COLUMNS = (
    "primitive", "backend", "device", "world_size", "nnodes", "dtype", "op", "mode", "root",
    "src", "dst", "pattern", "env", "api", "placement", "graph", "buffers",
)  # fmt: skip
"""What a communication row measured, apart from its size (COMM_MATCH_KEY adds the size): the
report's lines over sizes are these."""

DDP_CASE_COLUMNS = (
    "strategy", "backend", "device", "world_size", "nnodes", "model", "params", "dtype",
    "batch_size", "bucket_mb", "gradient_as_bucket_view", "static_graph", "avg_every", "env",
)  # fmt: skip
"""What a DDP row measured (DDP_MATCH_KEY is these and `primitive`)."""

DDP_STRATEGY_COLUMNS = (
    "strategy", "bucket_mb", "gradient_as_bucket_view", "static_graph", "avg_every",
)  # fmt: skip
"""The DDP_CASE_COLUMNS that describe the strategy; the others are the configuration that the
strategies of one comparison share (the report's compute/communication split groups on those)."""

# ---- the match keys: the one definition of "the same case" in compare and report -------------
COMM_MATCH_KEY = (*COMM_CASE_COLUMNS, "size_bytes")
"""Communication rows of two runs (compare), or of two sources and repeated runs (report), are
one case when they agree on every one of these columns."""

DDP_MATCH_KEY = ("primitive", *DDP_CASE_COLUMNS)
"""The same for DDP rows. `primitive` is always `ddp` there, so it tells no two DDP rows apart; it
is in the key so that a DDP row names itself as a communication row does (compare's
`ddp n=2 strategy=ddp`)."""

DDP_CONFIG_COLUMNS = tuple(c for c in DDP_MATCH_KEY if c not in DDP_STRATEGY_COLUMNS)
"""DDP_MATCH_KEY without the strategy: a configuration whose strategies a report compares."""


def column_names(row_type: type) -> list[str]:
    """The CSV header of a row dataclass, in declaration order."""
    return [f.name for f in fields(row_type)]
