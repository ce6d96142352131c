"""Launch one torchrun process group per world size and watch it.

The CLI never imports torch.distributed: it builds a torchrun command line with the same Python,
hands the workers one spec file, follows results.csv for progress, and when the group fails names
the rank, what it was measuring and the tail of its log.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from distbench.collectors.schema import RESULTS_CSV
from distbench.collectors.sink import count_rows
from distbench.spec import LaunchSpec

POLL_S = 0.2
TERMINATE_GRACE_S = 20.0


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
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={world_size}",
        "--max-restarts=0",
        "--monitor-interval=0.2",
        "-m",
        "distbench.worker",
        str(spec_path),
    ]


def worker_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")  # torchrun's own default, set so it stays quiet
    env["PYTHONUNBUFFERED"] = "1"
    return env


def torchrun_log_path(run_dir: Path, world_size: int) -> Path:
    return run_dir / "logs" / f"ws{world_size}-torchrun.log"


def run_launch(
    launch: LaunchSpec,
    world_size: int,
    spec_path: Path,
    on_progress: Callable[[int], None],
) -> LaunchResult:
    """Run one process group to completion. Ctrl-C or SIGTERM stops torchrun (which stops its
    workers) before the KeyboardInterrupt propagates."""
    run_dir = Path(launch.run_dir)
    results = run_dir / RESULTS_CSV
    before = count_rows(results)
    log_path = torchrun_log_path(run_dir, world_size)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            build_torchrun_command(launch, world_size, spec_path),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=worker_env(),
            start_new_session=True,  # Ctrl-C reaches us; we stop torchrun deliberately
        )
        try:
            seen = 0
            while proc.poll() is None:
                time.sleep(POLL_S)
                rows = count_rows(results) - before
                if rows != seen:
                    seen = rows
                    on_progress(rows)
        finally:
            if proc.poll() is None:
                stop_group(proc, run_dir, world_size)
    rows = count_rows(results) - before
    on_progress(rows)
    failure = None
    if proc.returncode != 0:
        failure = describe_failure(run_dir, world_size, proc.returncode)
    return LaunchResult(world_size, proc.returncode, rows, failure)


def stop_group(proc: subprocess.Popen[bytes], run_dir: Path, world_size: int) -> None:
    """SIGTERM torchrun (it forwards to its workers), then SIGKILL whatever is left."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=TERMINATE_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for pid in worker_pids(run_dir, world_size):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def worker_pids(run_dir: Path, world_size: int) -> list[int]:
    """Worker pids from their logs' start lines (workers run in sessions of their own)."""
    pids = []
    for path in sorted((run_dir / "logs").glob(f"ws{world_size}-rank*.log")):
        for match in re.finditer(r"start pid=(\d+)", path.read_text(errors="replace")):
            pids.append(int(match.group(1)))
    return pids


def tail(path: Path, lines: int = 8) -> str:
    try:
        text = path.read_text(errors="replace").rstrip().splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


def failed_ranks(torchrun_log: str) -> list[tuple[int, str]]:
    """(rank, exit description) pairs from torchrun's failure summary."""
    found = []
    pattern = re.compile(r"rank\s*:\s*(\d+).*?\n\s*exitcode\s*:\s*(-?\d+)", re.S)
    for match in pattern.finditer(torchrun_log):
        rank, code = int(match.group(1)), int(match.group(2))
        if code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exit code {code}"
        if (rank, how) not in found:
            found.append((rank, how))
    return found


def last_measurement(log_text: str) -> str | None:
    """The measurement a rank had begun last, from its 'begin ...' log lines."""
    begins = re.findall(r"begin (\S+ .*)", log_text)
    return begins[-1] if begins else None


def describe_failure(run_dir: Path, world_size: int, returncode: int) -> str:
    """One paragraph naming the failed rank(s), what they were measuring, and their log tail."""
    torchrun_log = torchrun_log_path(run_dir, world_size)
    summary = torchrun_log.read_text(errors="replace") if torchrun_log.exists() else ""
    ranks = failed_ranks(summary)
    if not ranks:
        return (
            f"the world-size-{world_size} group failed (torchrun exit code {returncode}); "
            f"see {torchrun_log}:\n{tail(torchrun_log, 15)}"
        )
    parts = []
    for rank, how in ranks:
        path = run_dir / "logs" / f"ws{world_size}-rank{rank}.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        doing = last_measurement(text)
        where = f" while measuring {doing}" if doing else " before its first measurement"
        parts.append(f"rank {rank} failed ({how}){where}; its log: {path}\n{tail(path)}")
    return "\n".join(parts)
