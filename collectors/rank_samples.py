"""Per-rank raw samples (--rank-samples node|all): Parquet files under RUN/rank-samples/.

samples.csv holds the rank -1 samples (the per-sample maximum over ranks, the input of every
statistic). Every rank's own samples are kept only on request, as nccl-tests keeps per-iteration
data with -J/-I and asv with --record-samples: at the end of a launch each node's local rank 0
writes its node's ranks (`node`: one file per node, the samples reaching it over the node's
own gloo group, tensors only) or each rank its own (`all`). Nothing crosses nodes, nothing is
pickled, and global rank 0 receives nothing it did not measure.

    rank-samples/<part>ws<W>-node<K>.parquet    (node)
    rank-samples/<part>ws<W>-rank<R>.parquet    (all)

`<part>` is the measurement ids' tag (`nccl-`, `env1-` ...) so that a sweep's launches never
share a name; a resumed launch that finds its name taken adds `-2`, `-3` .... Columns:
measurement (string, dictionary-encoded), rank (int32), trial (int32), iter (int32),
time_us (float64), loss (float64: a DDP step's loss on the rank's shard; NaN for communication
samples), zstd-compressed. On several nodes with their own --out, each node's files
stay in its own run directory; with one shared --out, node K's lie under OUT/node<K>/.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

RANK_SAMPLES_DIR = "rank-samples"
RANK_SAMPLE_MODES = ("off", "node", "all")
"""--rank-samples: off (samples.csv's rank -1 rows only), node (one Parquet file per node), all
(one per rank)."""
COLUMNS = ("measurement", "rank", "trial", "iter", "time_us", "loss")


def file_stem(measurement: str, world_size: int) -> str:
    """'nccl/ws2/i0' -> 'nccl-ws2': the launch part of a measurement id, as a file name."""
    head = measurement.rsplit("/", 1)[0] if "/" in measurement else f"ws{world_size}"
    return head.replace("/", "-")


def free_path(folder: Path, stem: str) -> Path:
    """folder/stem.parquet, or stem-2, stem-3 ... where a resumed launch's first part has it."""
    path, n = folder / f"{stem}.parquet", 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{n}.parquet"
    return path


def samples_table(
    measurements: Sequence[str],
    ranks: Sequence[int],
    trials: Sequence[int],
    iters: Sequence[int],
    times_us: Sequence[float],
    losses: Sequence[float],
) -> pa.Table:
    """The Parquet table of per-rank samples, by columns."""
    import pyarrow as pa

    return pa.table(
        {
            "measurement": pa.array(measurements, pa.string()).dictionary_encode(),
            "rank": pa.array(ranks, pa.int32()),
            "trial": pa.array(trials, pa.int32()),
            "iter": pa.array(iters, pa.int32()),
            "time_us": pa.array(times_us, pa.float64()),
            "loss": pa.array(losses, pa.float64()),
        }
    )


def write_samples(path: Path, table: pa.Table) -> None:
    """Write the table whole, then rename it in place: a reader never sees half a file."""
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".parquet.partial")
    pq.write_table(table, partial, compression="zstd")
    partial.rename(path)


def find_rank_sample_files(run_dir: Path) -> list[Path]:
    """Every per-rank samples file of a run directory, its node<K>/ subdirectories' included."""
    return sorted(Path(run_dir).glob(f"**/{RANK_SAMPLES_DIR}/*.parquet"))


def read_rank_samples(run_dir: Path, columns: Sequence[str] = COLUMNS) -> Any:
    """A run's per-rank samples as one pandas frame of `columns` (None: the run has none)."""
    files = find_rank_sample_files(run_dir)
    if not files:
        return None
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables = [pq.read_table(path, columns=list(columns)) for path in files]
    table = pa.concat_tables([t.cast(tables[0].schema) for t in tables])
    return table.to_pandas()
