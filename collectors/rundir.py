"""The run directory's file names, here only (collectors/schema.py re-exports them): results,
samples, manifest and spec at the top, per-launch files under logs/, node K's under node<K>/."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

RESULTS_CSV = "results.csv"
SAMPLES_CSV = "samples.csv"
MANIFEST_JSON = "manifest.json"
SPEC_JSON = "spec.json"
"""The RunSpec every rank reads; a sweep's other backends add spec-<backend>.json."""
LOGS_DIR = "logs"
"""Per launch of world size N: wsN-torchrun.log, wsN-rank<R>.log, wsN-rank<R>.alive (a running
rank's heartbeat), wsN-env.json (global rank 0's environment), wsN-torch.json (torch's facts),
wsN-progress.log (global rank 0's `<unix time> begin <measurement> <what>` lines, which the CLI's
progress display reads)."""


def backend_spec_path(run_dir: Path, backend: str) -> Path:
    """The spec of a sweep's later backend (its first keeps SPEC_JSON)."""
    return Path(run_dir) / f"spec-{backend}.json"


def launch_path(run_dir: Path, world_size: int, name: str) -> Path:
    """logs/ws<N>-<name>: a file of the launch of world size N (LOGS_DIR lists them)."""
    return Path(run_dir) / LOGS_DIR / f"ws{world_size}-{name}"


def rank_log_path(run_dir: Path, world_size: int, rank: int) -> Path:
    """A rank's stdout and stderr (C++ messages included)."""
    return launch_path(run_dir, world_size, f"rank{rank}.log")


def heartbeat_path(run_dir: Path, world_size: int, rank: int) -> Path:
    """A worker's heartbeat: its pid inside, its mtime renewed while it runs (groups.Heartbeat)."""
    return launch_path(run_dir, world_size, f"rank{rank}.alive")


def launch_file(name: str) -> Callable[[Path, int], Path]:
    """(run_dir, world_size) -> logs/ws<N>-<name>: one file of each launch."""

    def path(run_dir: Path, world_size: int) -> Path:
        return launch_path(run_dir, world_size, name)

    return path


progress_path = launch_file("progress.log")
"""Where global rank 0 announces each measurement as it starts (groups.announce_measurements);
the CLI shows the running one from it."""
torchrun_log_path = launch_file("torchrun.log")
worker_env_path = launch_file("env.json")
"""Where global rank 0 of a launch leaves its environment for the CLI's manifest."""
rank_map_path = launch_file("ranks.json")
"""Where global rank 0 leaves every rank's node and host of a group: a failure can then name
the ranks and hosts on the other nodes."""
worker_facts_path = launch_file("torch.json")
"""Where a node's local rank 0 leaves torch's own facts (GPU names, NCCL) for the manifest."""


def node_dir(run_dir: Path, node_rank: int) -> Path:
    """Where node K > 0 of a multi-node run keeps its spec, manifest and logs."""
    return Path(run_dir) / f"node{node_rank}"


NIGHT_STATE = "nightly.state"
"""ci/nightly.sh's record of a night, in the night's folder: `key=value` lines (status=partial
until every launch of the night completed, then complete; launches, config, sweep_args;
resumed=1 once `ci/nightly.sh --resume` finished it). distbench history skips a night that is
not complete; nightly.sh's --update-baseline saves only a complete night never resumed."""


def read_night_state(night: Path) -> dict[str, str] | None:
    """A night's NIGHT_STATE as key -> value (comments skipped); None where it has none (a
    night not made by ci/nightly.sh, or a run)."""
    state = Path(night) / NIGHT_STATE
    if not state.is_file():
        return None
    lines = state.read_text(encoding="utf-8", errors="replace").splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line and line[0] != "#")


RANKS_CSV = "ranks.csv"
"""`distbench pairs`: one row per rank or node (collectors/ranks.py RankRow)."""
