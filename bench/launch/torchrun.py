"""Launch a torchrun process group (one node, or this node's share of several) and watch it.

The CLI never imports torch.distributed: it builds a torchrun command line with the same Python
(--standalone, or a c10d/static rendezvous across nodes), hands the workers one spec file,
follows results.csv for progress and the workers' heartbeat files for silence (--timeout), and
when the group fails names the rank, what it was measuring and the tail of its log.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from distbench.collectors.schema import (
    LOGS_DIR,
    RESULTS_CSV,
    torchrun_log_path,
)
from distbench.collectors.sink import count_rows
from distbench.launch.diagnose import describe_failure, describe_silent
from distbench.spec import LaunchSpec

POLL_S = 0.2
TERMINATE_GRACE_S = 5.0
"""After SIGTERM, how long torchrun gets to stop its workers before everything is SIGKILLed."""


@dataclass(frozen=True)
class LaunchResult:
    world_size: int
    returncode: int
    rows: int
    """Rows this launch added to results.csv."""
    failure: str | None
    """What went wrong, for the user; None on success."""


def build_torchrun_command(launch: LaunchSpec, world_size: int, spec_path: Path) -> list[str]:
    """torchrun with this interpreter. The worker's only argument is the spec file, so torchrun
    cannot mistake one of our flags for an abbreviation of its own (pytorch #120601)."""
    if launch.nnodes > 1:
        # Several nodes: every node runs this same line. With a node rank, torchrun's static
        # rendezvous makes node 0 (the endpoint's host) hold global rank 0; without one, c10d
        # assigns node ranks. Either way the join waits at most --timeout seconds.
        if launch.node_rank >= 0:
            rdzv = [
                "--rdzv-backend=static",
                f"--node-rank={launch.node_rank}",
                f"--rdzv-conf=timeout={max(1, int(launch.timeout_s))}",
            ]
        else:
            rdzv = ["--rdzv-backend=c10d", f"--rdzv-conf=join_timeout={int(launch.timeout_s)}"]
        group = [
            f"--nnodes={launch.nnodes}",
            f"--nproc-per-node={launch.nproc_per_node}",
            f"--rdzv-endpoint={launch.rdzv_endpoint}",
            f"--rdzv-id={launch.rdzv_id}",
            *rdzv,
        ]
    else:
        group = ["--standalone", f"--nproc-per-node={world_size}"]
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        *group,
        "--max-restarts=0",
        "--monitor-interval=0.1",  # torchrun's default: it sees the ranks exit sooner
        "-m",
        "distbench.worker",
        str(spec_path),
    ]


def exited(proc: subprocess.Popen[bytes], wait_s: float) -> bool:
    """Wait up to `wait_s` for torchrun to end: True as soon as it has (no poll-interval delay
    after the last rank exits, which a sleep would add to every launch)."""
    try:
        proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        return False
    return True


def worker_env(settings: tuple[str, ...] = ()) -> dict[str, str]:
    """The workers' environment: ours, plus the launch's --env combination (`NAME=VALUE`)."""
    env = dict(os.environ)
    for setting in settings:
        name, _, value = setting.partition("=")
        env[name] = value
    env.setdefault("OMP_NUM_THREADS", "1")  # torchrun's own default, set so it stays quiet
    env["PYTHONUNBUFFERED"] = "1"
    return env


def heartbeats(run_dir: Path, world_size: int) -> dict[int, Path]:
    """rank -> heartbeat file, for the ranks of this node that are running now."""
    found = {}
    for path in (run_dir / LOGS_DIR).glob(f"ws{world_size}-rank*.alive"):
        rank = path.name.removeprefix(f"ws{world_size}-rank").removesuffix(".alive")
        if rank.isdigit():
            found[int(rank)] = path
    return found


def silent_ranks(run_dir: Path, world_size: int, timeout_s: float) -> list[tuple[int, float]]:
    """(rank, seconds since its last heartbeat) for every rank silent longer than timeout_s."""
    now = time.time()
    silent = []
    for rank, path in sorted(heartbeats(run_dir, world_size).items()):
        try:
            age = now - path.stat().st_mtime
        except FileNotFoundError:
            continue  # the rank finished meanwhile
        if age > timeout_s:
            silent.append((rank, age))
    return silent


def run_launch(
    launch: LaunchSpec,
    world_size: int,
    spec_path: Path,
    on_poll: Callable[[], None],
) -> LaunchResult:
    """Run one process group to completion, watching the workers' heartbeats: a rank silent for
    --timeout seconds (stopped, swapped out, wedged) ends the launch at once, named. Ctrl-C or
    SIGTERM stops the group before the KeyboardInterrupt propagates. `on_poll` runs every
    POLL_S (the progress display reads the rows and the running measurement)."""
    run_dir = Path(launch.run_dir)
    results = run_dir / RESULTS_CSV
    before = count_rows(results)
    log_path = torchrun_log_path(run_dir, world_size)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    for old in heartbeats(run_dir, world_size).values():
        old.unlink(missing_ok=True)  # left by an earlier, interrupted attempt (--resume)
    failure = None
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            build_torchrun_command(launch, world_size, spec_path),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=worker_env(launch.env),
            start_new_session=True,  # Ctrl-C reaches us; we stop torchrun deliberately
        )
        try:
            while not exited(proc, POLL_S):
                on_poll()
                silent = silent_ranks(run_dir, world_size, launch.timeout_s)
                if silent:
                    failure = describe_silent(run_dir, world_size, silent, launch.timeout_s)
                    stop_group(proc, run_dir, world_size, grace_s=0.0)
        finally:
            if proc.poll() is None:
                stop_group(proc, run_dir, world_size)
    for left in heartbeats(run_dir, world_size).values():
        left.unlink(missing_ok=True)  # the workers are gone; a killed one leaves its file
    rows = count_rows(results) - before
    if failure is None and proc.returncode != 0:
        failure = describe_failure(run_dir, world_size, proc.returncode)
    return LaunchResult(world_size, proc.returncode, rows, failure)


def stop_group(
    proc: subprocess.Popen[bytes],
    run_dir: Path,
    world_size: int,
    grace_s: float = TERMINATE_GRACE_S,
) -> None:
    """SIGTERM torchrun (it forwards to its workers), then SIGKILL whatever is left: a stopped
    (SIGSTOP) worker only goes with SIGKILL. grace_s=0 kills the workers first."""
    if grace_s <= 0:
        kill_workers(run_dir, world_size)
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=max(grace_s, 2.0))
    except subprocess.TimeoutExpired:
        kill_workers(run_dir, world_size)
        proc.kill()
        proc.wait()
    kill_workers(run_dir, world_size)


def kill_workers(run_dir: Path, world_size: int) -> None:
    """SIGKILL this launch's workers that are still there (a dead worker's heartbeat file stays
    behind, so its pid is checked to still be a distbench worker before the signal)."""
    for pid in worker_pids(run_dir, world_size):
        try:
            if b"distbench.worker" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue  # gone, and the pid reused
        except OSError:
            if sys.platform.startswith("linux"):
                continue  # gone
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def worker_pids(run_dir: Path, world_size: int) -> list[int]:
    """Pids of this launch's running workers, from their heartbeat files (workers run in
    torchrun's session, not ours; a finished worker has removed its file)."""
    pids = []
    for path in heartbeats(run_dir, world_size).values():
        with contextlib.suppress(OSError, ValueError):
            pids.append(int(path.read_text().strip()))
    return pids
