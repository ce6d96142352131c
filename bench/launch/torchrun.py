"""Launch a torchrun process group (one node, or this node's share of several) and watch it.

The CLI never imports torch.distributed: it builds a torchrun command line with the same Python
(--standalone, or a c10d/static rendezvous across nodes; torchrun runs inside launch/agent.py,
which says when torch is imported and the rendezvous wait begins), hands the workers one spec
file, follows results.csv for progress, and watches for silence (--timeout): first the
rendezvous (torchrun ready, no worker started yet), then the workers' heartbeat files. When the
group fails it names the rank, what it was measuring and the tail of its log, or what the
rendezvous waited for.
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
from distbench.launch.diagnose import (
    describe_failure,
    describe_rendezvous_wait,
    describe_silent,
    describe_slow_start,
)
from distbench.spec import LaunchSpec

POLL_S = 0.2
START_S = 120.0
"""How long torchrun may take to import torch before its rendezvous (or --timeout, if longer):
from a shared filesystem under load this takes minutes."""
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
        "distbench.launch.agent",  # torchrun's main, touching `ready` once torch is imported
        str(ready_path(Path(launch.run_dir), world_size)),
        *group,
        "--max-restarts=0",
        "--monitor-interval=0.1",  # torchrun's default: it sees the ranks exit sooner
        "-m",
        "distbench.worker",
        str(spec_path),
    ]


def ready_path(run_dir: Path, world_size: int) -> Path:
    """The file launch/agent.py touches once torchrun has imported torch."""
    return torchrun_log_path(run_dir, world_size).with_suffix(".ready")


def exited(proc: subprocess.Popen[bytes], wait_s: float) -> bool:
    """Wait up to `wait_s` for torchrun to end: True as soon as it has (no poll-interval delay
    after the last rank exits, which a sleep would add to every launch)."""
    try:
        proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        return False
    return True


def worker_env(settings: tuple[str, ...] = ()) -> dict[str, str]:
    """The workers' environment: ours less torchrun's PET_* variables (read by options/multinode.py
    and passed as options: left in, torchrun would take each as the default of its option, a
    PET_NNODES=2 making a --standalone launch wait for a second node), plus the launch's --env
    combination (`NAME=VALUE`)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PET_")}
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


def child_pids(pid: int) -> list[int] | None:
    """The processes whose parent is `pid` (/proc), or None where /proc cannot tell."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    children = []
    for stat in proc.glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue  # gone meanwhile
        if len(fields) > 1 and fields[1] == str(pid):
            children.append(int(stat.parent.name))
    return children


@dataclass
class StartWatch:
    """The wait before the workers run: torchrun importing torch (START_S or --timeout, the
    longer), then its rendezvous (--timeout from the moment launch/agent.py says it is ready)."""

    launch: LaunchSpec
    world_size: int
    pid: int
    began: float
    ready_at: float | None = None
    started: bool = False

    def check(self, now: float) -> str | None:
        """None while all is well (or the workers run), else what the launch waited for."""
        if self.started:
            return None
        run_dir = Path(self.launch.run_dir)
        children = child_pids(self.pid)
        self.started = bool(children) or (
            children is None and bool(heartbeats(run_dir, self.world_size))
        )
        if self.started:
            return None
        if self.ready_at is None and ready_path(run_dir, self.world_size).exists():
            self.ready_at = now
        if self.ready_at is not None and now - self.ready_at > self.launch.timeout_s:
            return describe_rendezvous_wait(self.launch, self.world_size, now - self.ready_at)
        limit = max(START_S, self.launch.timeout_s)
        if self.ready_at is None and now - self.began > limit:
            return describe_slow_start(run_dir, self.world_size, now - self.began)
        return None


def run_launch(
    launch: LaunchSpec,
    world_size: int,
    spec_path: Path,
    on_poll: Callable[[], None],
) -> LaunchResult:
    """Run one process group to completion, watching the rendezvous (--timeout after torchrun
    is ready, no worker started: ended, naming what it waited for) and then the workers'
    heartbeats: a rank silent for --timeout seconds (stopped, swapped out, wedged) ends the
    launch at once, named. Ctrl-C or SIGTERM stops the group before the KeyboardInterrupt
    propagates. `on_poll` runs every POLL_S (the progress display reads the rows and the
    running measurement)."""
    run_dir = Path(launch.run_dir)
    results = run_dir / RESULTS_CSV
    before = count_rows(results)
    log_path = torchrun_log_path(run_dir, world_size)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    for old in heartbeats(run_dir, world_size).values():
        old.unlink(missing_ok=True)  # left by an earlier, interrupted attempt (--resume)
    ready_path(run_dir, world_size).unlink(missing_ok=True)
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
        watch = StartWatch(launch, world_size, proc.pid, time.monotonic())
        try:
            while not exited(proc, POLL_S):
                on_poll()
                waited = watch.check(time.monotonic())
                if waited is not None:
                    failure = waited
                    stop_group(proc, run_dir, world_size, grace_s=0.0)
                    break
                silent = silent_ranks(run_dir, world_size, launch.timeout_s)
                if silent:
                    failure = describe_silent(run_dir, world_size, silent, launch.timeout_s)
                    stop_group(proc, run_dir, world_size, grace_s=0.0)
        finally:  # Ctrl-C, a closed output or a finished group alike: no worker, no heartbeat
            if proc.poll() is None:
                stop_group(proc, run_dir, world_size)
            ready_path(run_dir, world_size).unlink(missing_ok=True)
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
