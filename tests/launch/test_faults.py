"""Faults reproduced for real on 2-rank gloo groups: a worker killed, a worker stopped (SIGSTOP),
the CLI interrupted (SIGTERM). Ctrl-C and resume are tested once, with these checks, in
test_interrupt.py. Plus the pure parts of launch/diagnose.py."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from distbench.collectors.sink import read_rows
from distbench.launch.diagnose import describe_failure, failed_ranks, position

# Enough measurements (11 sizes) of enough ops that a fault lands mid-sweep.
SWEEP = ["--backend", "gloo", "--min-size", "1K", "--max-size", "1M", "--factor", "2"]
SLOW = ["--iters", "300", "--warmup", "1", "--trials", "2"]


def start(out: Path, *extra: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "distbench", "allreduce", *SWEEP, *SLOW, "--out", str(out)]
    return subprocess.Popen(
        [*command, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def wait_for(path: Path, pattern: str, timeout_s: float = 60.0) -> str:
    """Wait until a log file matches `pattern`; return the log."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        text = path.read_text(errors="replace") if path.exists() else ""
        if re.search(pattern, text):
            return text
        time.sleep(0.05)
    raise AssertionError(f"{path} never matched {pattern!r}")


def worker_pid(out: Path, rank: int) -> int:
    text = wait_for(out / "logs" / f"ws2-rank{rank}.log", r"begin ws2/i2 ")
    return int(re.findall(r"start pid=(\d+)", text)[-1])


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def processes_using(run_dir: Path) -> list[int]:
    """Pids whose command line names this run (torchrun and its workers)."""
    needle = str(run_dir.resolve()).encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if needle in (entry / "cmdline").read_bytes() and alive(int(entry.name)):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def finish(proc: subprocess.Popen[str], timeout_s: float) -> tuple[int, str, float]:
    begin = time.monotonic()
    try:
        _, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(f"the CLI did not exit within {timeout_s} s:\n{err}") from None
    return proc.returncode, err, time.monotonic() - begin


def assert_rows_parse(out: Path) -> list[dict[str, str]]:
    rows = read_rows(out / "results.csv")
    assert rows, "finished rows must be kept"
    for row in rows:
        float(row["time_us_p50"])
        assert re.fullmatch(r"ws2/i\d+", row["measurement"])
    return rows


@pytest.mark.slow
def test_killed_rank_is_named_with_its_size_and_log(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = start(out)
    os.kill(worker_pid(out, 1), signal.SIGKILL)
    code, err, took = finish(proc, 30)
    assert code == 1
    assert took < 15, f"exit took {took:.1f} s"
    first = err.split("error: ", 1)[1]
    assert first.startswith("rank 1 failed (killed by SIGKILL)"), err
    assert re.search(r"ws2/i\d+ all_reduce float32 throughput size=\d+", first), err
    assert "ws2-rank1.log" in first
    assert len(assert_rows_parse(out)) >= 2
    assert json.loads((out / "manifest.json").read_text())["status"] == "failed"
    assert processes_using(out) == []


@pytest.mark.slow
def test_stopped_rank_ends_the_run_within_the_timeout(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = start(out, "--timeout", "8")
    pid = worker_pid(out, 1)
    os.kill(pid, signal.SIGSTOP)
    try:
        code, err, took = finish(proc, 40)
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    assert code == 1
    assert took < 8 + 8, f"exit took {took:.1f} s after the stop"
    assert "rank 1 stopped responding (no heartbeat for" in err, err
    assert "ws2-rank1.log" in err
    assert len(assert_rows_parse(out)) >= 2
    assert json.loads((out / "manifest.json").read_text())["status"] == "failed"
    assert not alive(pid)
    assert processes_using(out) == []


@pytest.mark.slow
def test_sigterm_stops_every_rank(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = start(out)
    pids = [worker_pid(out, 0), worker_pid(out, 1)]
    proc.send_signal(signal.SIGTERM)
    code, _, took = finish(proc, 30)
    assert code == 130
    assert took < 10
    assert not any(alive(pid) for pid in pids)
    assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"
    assert_rows_parse(out)


def test_resume_refuses_a_completed_or_missing_run(tmp_path: Path) -> None:
    from distbench.cli.app import run_cli

    assert run_cli(["allreduce", "--resume", str(tmp_path / "nothing")]) == 2
    (tmp_path / "done").mkdir()
    (tmp_path / "done" / "spec.json").write_text("{}")
    (tmp_path / "done" / "manifest.json").write_text('{"status": "completed"}')
    assert run_cli(["allreduce", "--resume", str(tmp_path / "done")]) == 2


TORCHRUN_SUMMARY = """\
E1129 18:43:15.708000 14561 api.py:1002] failed (exitcode: -9) local_rank: 1 (pid: 14569) of binary
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
=======================================================
distbench.worker FAILED
-------------------------------------------------------
Failures:
[1]:
  time      : 2026-11-29_18:43:15
  host      : localhost
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 14568)  (SIGTERM)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 14568
-------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-11-29_18:43:15
  host      : localhost
  rank      : 1 (local_rank: 1)
  exitcode  : -9 (pid: 14569)  (SIGKILL)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 14569
=======================================================
"""


def test_failed_ranks_reads_torchruns_summary_root_cause_first() -> None:
    # torch 2.13's real summary; the line above it mentions 'local_rank: 1' before any exitcode
    assert failed_ranks(TORCHRUN_SUMMARY) == [(1, "killed by SIGKILL"), (0, "killed by SIGTERM")]
    assert failed_ranks("no summary here") == []


def test_position_tells_inside_between_and_after() -> None:
    begin = "[t rank 1] start pid=1\n[t rank 1] begin ws2/i3 all_reduce float32 throughput size=8\n"
    assert position(begin) == "while measuring ws2/i3 all_reduce float32 throughput size=8"
    ended = begin + "[t rank 1] end ws2/i3 aggregate_us=1 write_us=2\n"
    assert position(ended).startswith("after finishing ws2/i3")
    assert "leaving the group" in position(ended + "[t rank 1] done\n")
    assert position("[t rank 1] start pid=1\n") == "before its first measurement"
    # a resumed run appends to the log: only the latest process counts
    assert position(ended + "[t rank 1] start pid=2\n") == "before its first measurement"


def test_describe_failure_names_rank_measurement_and_log(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "ws2-torchrun.log").write_text(TORCHRUN_SUMMARY)
    (logs / "ws2-rank1.log").write_text(
        "[t rank 1] start pid=1\n[t rank 1] begin ws2/i4 all_reduce float32 throughput size=16\n"
    )
    text = describe_failure(tmp_path, 2, 1)
    assert text.startswith(
        "rank 1 failed (killed by SIGKILL) while measuring ws2/i4 all_reduce float32 "
        f"throughput size=16; its log: {logs / 'ws2-rank1.log'}"
    )
    assert "rank 0 also ended (killed by SIGTERM)" in text


def test_describe_failure_says_when_a_peer_went_away(tmp_path: Path) -> None:
    """What a node sees when another node's ranks are stopped (real gloo wording)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "ws2-torchrun.log").write_text(
        "Failures:\n  <NO_OTHER_FAILURES>\nRoot Cause (first observed failure):\n[0]:\n"
        "  rank      : 0 (local_rank: 0)\n  exitcode  : 1 (pid: 7)\n"
    )
    (logs / "ws2-rank0.log").write_text(
        "[t rank 0] start pid=7\n[t rank 0] begin ws2/i2 all_reduce float32 throughput size=4096\n"
        "RuntimeError: [pair.cc:537] Read error [127.0.0.1]:12173: Connection reset by peer.\n"
    )
    text = describe_failure(tmp_path, 2, 1)
    assert text.startswith(
        "rank 0 failed (exit code 1) while measuring ws2/i2 all_reduce float32 throughput "
        "size=4096 because a peer's connection dropped"
    )


def test_describe_failure_names_the_killed_rank_when_torchrun_saw_a_victim_first(
    tmp_path: Path,
) -> None:
    """torchrun may observe the rank whose peer vanished before the rank that died: the
    killed rank is still named first (seen for real: rank 0 'root cause', SIGTERM)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    swapped = (
        TORCHRUN_SUMMARY.replace("rank      : 0 (local_rank: 0)", "rank      : X")
        .replace("rank      : 1 (local_rank: 1)", "rank      : 0 (local_rank: 0)")
        .replace("rank      : X", "rank      : 1 (local_rank: 1)")
    )
    swapped = swapped.replace("-15 (pid: 14568)", "-T").replace("-9 (pid: 14569)", "-15 (pid: 1)")
    swapped = swapped.replace("-T", "-9 (pid: 2)")
    (logs / "ws2-torchrun.log").write_text(swapped)
    assert failed_ranks(swapped) == [(0, "killed by SIGTERM"), (1, "killed by SIGKILL")]
    (logs / "ws2-rank0.log").write_text(
        "[t rank 0] start pid=1\n[t rank 0] begin ws2/i2 all_reduce float32 throughput size=4096\n"
        "RuntimeError: [pair.cc:537] Read error [127.0.0.1]:11938: Connection reset by peer.\n"
    )
    (logs / "ws2-rank1.log").write_text(
        "[t rank 1] start pid=2\n[t rank 1] begin ws2/i2 all_reduce float32 throughput size=4096\n"
    )
    text = describe_failure(tmp_path, 2, 1)
    assert text.startswith("rank 1 failed (killed by SIGKILL) while measuring ws2/i2")
    assert "rank 0 also ended (killed by SIGTERM)" in text
