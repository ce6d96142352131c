"""Faults reproduced for real on 2-rank gloo groups: a worker killed, a worker stopped (SIGSTOP),
the CLI interrupted (SIGTERM). Ctrl-C and resume are tested once, with these checks, in
test_interrupt.py. Plus the pure parts of launch/diagnose.py."""

from __future__ import annotations

from pathlib import Path

from distbench.launch.diagnose import describe_failure, failed_ranks, position


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
