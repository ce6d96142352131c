"""How the schema evolved: one Migration per version (columns added with the value older rows get,
columns removed, columns whose meaning changed). reports/load.py upgrades older runs with it,
compare refuses to set two numbers side by side across a changed meaning, and docs/upgrading.md's
version list is generated from it (docs/hooks/migrations.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from distbench.collectors.ranks import RankRow
from distbench.collectors.rows_pipeline import PipelineRow
from distbench.collectors.schema import DdpRow, ResultRow, SampleRow, column_names

FILE_KINDS = ("comm", "ddp", "pipeline", "samples", "ranks")
"""comm: results.csv of ResultRow; ddp: results.csv of DdpRow; pipeline: results.csv of PipelineRow
(new in v3, so no older run has one); samples: samples.csv (SampleRow); ranks: ranks.csv of
`distbench pairs` (RankRow; reports/report/pairs.py reads older ones)."""


@dataclass(frozen=True)
class Migration:
    """What changed from version - 1 to `version`, per file kind."""

    version: int
    summary: str
    added: dict[tuple[str, str], str] = field(default_factory=dict)
    """(kind, column) -> the value (as a CSV cell) that rows of older versions get."""
    removed: tuple[tuple[str, str], ...] = ()
    """(kind, column): dropped when an older run is read."""
    changed: dict[tuple[str, str], str] = field(default_factory=dict)
    """(kind, column) -> how its meaning changed: such a column is never compared across it."""


def empty(kind: str, *columns: str) -> dict[tuple[str, str], str]:
    """Migration.added for columns of `kind` that older rows read empty."""
    return {(kind, column): "" for column in columns}


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "the first release"),
    Migration(
        2,
        "measurement truth (#10): DDP steps timed in windows between barriers, rates from means, "
        "honest labels",
        added={
            **empty("comm", "hosts"),
            **empty("samples", "run_id"),
            **empty("ddp", "window_steps", "comm_hidden_share"),
        },
        removed=(("ddp", "overlap"),),
        changed={
            **{
                ("ddp", f"step_time_us_{stat}"): "the slowest rank's window of steps between "
                "barriers / steps (v1: per-step maximum over unaligned ranks, 4-15 % high)"
                for stat in ("p50", "mean", "min", "max", "p95", "p99", "std")
            },
            ("ddp", "samples"): "timed windows behind the statistics (v1: timed steps)",
            ("ddp", "samples_per_s"): "from the mean step time (v1: from the p50)",
            ("ddp", "scaling_efficiency"): "from mean step times (v1: from p50s)",
            ("ddp", "comm_busbw_GBps"): "from mean step times; empty at world size 1 (v1: p50s)",
            ("ddp", "comm_share"): "from mean step times; empty at world size 1 (v1: p50s)",
            ("comm", "nnodes"): "the nodes the row's ranks span (v1: the launch's node count)",
            ("comm", "time_us_p95"): "empty in throughput mode (v1: a percentile of trial means)",
            ("comm", "time_us_p99"): "empty in throughput mode (v1: a percentile of trial means)",
            ("comm", "algbw_GBps"): "empty at world size 1, where nothing moves",
            ("comm", "busbw_GBps"): "empty at world size 1, where nothing moves",
            ("comm", "timer"): "cuda_event+dispatch for CUDA latency rows (v1 called the same "
            "measurement cuda_event)",
        },
    ),
    Migration(
        3,
        "precision-driven measurement (#14 §2): the p50's confidence interval, the trials run, "
        "whether --precision was met; the trial order (#16: sequential or interleaved); the --env "
        "combination (#12 §4, ddp rows too); send/recv message rates (#12 §1, multipair)"
        "; the api that issued the collective and its compile time (#15 §2)"
        "; FSDP2's bytes per step and every ddp row's peak memory (#15 §4)"
        "; in- or out-of-place placement and alltoallv's bytes per rank (#15 §3, §5)"
        "; CUDA-graph replays and symmetric-memory buffers (#15 §5)"
        "; the pipeline workload's results.csv, a new kind (#13 §1)",
        added={
            **empty("comm", "ci_low_us", "ci_high_us", "trials_run", "converged"),
            **empty("comm", "nccl_algo", "nccl_proto", "nccl_nchannels"),
            ("comm", "trial_order"): "sequential",
            **empty("comm", "env"),
            ("comm", "api"): "c10d",
            **empty("comm", "compile_s", "msg_rate_per_s"),
            ("comm", "placement"): "out",
            **empty("comm", "send_bytes_min", "send_bytes_max", "recv_bytes_min"),
            **empty("comm", "recv_bytes_max", "imbalance"),
            ("comm", "graph"): "false",
            ("comm", "buffers"): "regular",
            **empty("ddp", "env"),
            ("ddp", "allgather_bytes_per_step"): "0",
            ("ddp", "reduce_scatter_bytes_per_step"): "0",
            **empty("ddp", "peak_mem_bytes", "mem_source"),
        },
    ),
    Migration(
        4,
        "verdicts on the launch (#25), the first GPU run (#30), samples that scale (#27)",
        added={
            **empty("comm", "nccl_symmetric", "enqueue_us", "dispatch_bound", "window_msgs"),
            **empty("pipeline", "tensor_bytes_per_step", "bubble_p50"),
            ("ddp", "comm_baseline"): "ddp-nocomm",
            **empty("ranks", "first_z"),
        },
        removed=(("pipeline", "bytes_per_step_measured"), ("pipeline", "bubble_min")),
        changed={
            **{
                ("ddp", column): "grad-avg, grad-avg-flat, param-avg, fsdp and "
                "fsdp-reshard-false subtract the new local strategy's step (nothing sent), named "
                "in comm_baseline (v3: ddp-nocomm's, whose DDP overhead shortened their exposed "
                "time: busbw too high)"
                for column in ("comm_share", "comm_busbw_GBps")
            },
            **{
                ("ddp", column): "empty at world size 1, where nothing crosses a link, as "
                "comm_busbw_GBps (v3: the bytes the strategy hands its collectives there too)"
                for column in (
                    "comm_bytes_per_step",
                    "allgather_bytes_per_step",
                    "reduce_scatter_bytes_per_step",
                )
            },
            ("pipeline", "bubble"): "the optimizer's zero_grad and step count as busy, and on "
            "CUDA busy time is timed with events (v3: idle, and a synchronize around each part)",
            **{
                ("comm", column): "the p50's 95 % interval over trials, not samples: latency "
                "rows Woodruff's interval with the trial as the unit and a long-run variance of "
                "the trials in their order, from 6 trials (v3: every op counted as independent, "
                "which covered 41-56 %), or with --precision its 95 % confidence sequence over "
                "trials (valid at the trial --precision stopped at), throughput rows the "
                "order-statistic interval interpolated to 95 % (v3: the binomial one, 96-99 % at "
                "6-12 trials)"
                for column in ("ci_low_us", "ci_high_us")
            },
            ("comm", "converged"): "--precision met: latency rows by the 95 % confidence "
            "sequence over trials at any trial from the 7th, rows of one sample a trial by the "
            "99 % interval over trials at 3 looks in a row, one every 2 trials from the 10th "
            "(v3: the 95 % one, over ops in latency mode: converged after the first trials "
            "89-100 % of the time)",
            ("ranks", "busbw_GBps"): "its best pair's busbw, what it reaches with a healthy "
            "partner (v3: the median over its pairs)",
            ("ranks", "robust_z"): "of the best pair's log busbw against the others', the scale "
            "at least the trials' noise and 0.1; for a rank the first measurement flagged, with "
            "its pairs measured again (v3: of the medians, linear, scale floor 10 %, one "
            "measurement)",
            ("ranks", "outlier"): "flagged by the first measurement of its pairs and again when "
            "they are measured again, the confirmation (v3: by one measurement)",
            ("samples", "rank"): "samples.csv holds the rank -1 rows only (the per-sample "
            "max over ranks, the input of every statistic); each rank's own samples go to "
            "rank-samples/*.parquet with --rank-samples node|all (v3: every rank's rows too, "
            "gathered to rank 0 at the end of each launch; readers skip them)",
        },
    ),
)
"""One entry per version, oldest first; the last one is SCHEMA_VERSION."""


def changed_meaning(kind: str, column: str, old_version: int, new_version: int) -> int | None:
    """The newest version in (old, new] that changed `column`'s meaning for `kind`, else None."""
    low, high = sorted((old_version, new_version))
    found = [
        m.version for m in MIGRATIONS if low < m.version <= high and (kind, column) in m.changed
    ]
    return max(found) if found else None


def columns_at(kind: str, version: int) -> list[str]:
    """The columns a file of `kind` had at `version` (every current column, minus those added
    after it, plus those removed after it): what a run of that version must hold."""
    row_types = {
        "comm": ResultRow,
        "ddp": DdpRow,
        "pipeline": PipelineRow,
        "samples": SampleRow,
        "ranks": RankRow,
    }
    current = column_names(row_types[kind])
    later = [m for m in MIGRATIONS if m.version > version]
    added = {c for m in later for (k, c) in m.added if k == kind}
    removed = [c for m in later for (k, c) in m.removed if k == kind]
    return [c for c in current if c not in added] + [c for c in removed if c not in current]


def upgrade_columns(kind: str, version: int) -> tuple[dict[str, str], list[str]]:
    """For a file of `kind` written at `version`: the columns to add with their values, and the
    columns to drop, to read it as SCHEMA_VERSION."""
    later = [m for m in MIGRATIONS if m.version > version]
    added = {c: v for m in later for (k, c), v in m.added.items() if k == kind}
    dropped = [c for m in later for (k, c) in m.removed if k == kind]
    return added, dropped
