"""Faults reproduced for real on 2-rank gloo groups. The half that launches or runs for seconds; the
in-process half, and the file's whole story: tests/unit/launch/test_faults.py."""

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
    # what goes on from here, as after Ctrl-C
    assert f"to measure the rest: distbench allreduce --resume {out}" in err, err
    assert re.search(r"\n\d+ of \d+ measurements are kept\n", err), err


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
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "failed"
    assert manifest["stopped_by"].startswith("world size 2: rank 1 stopped responding")
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
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["status"], manifest["stopped_by"]) == ("interrupted", "SIGTERM")
    assert_rows_parse(out)


@pytest.mark.slow
def test_a_rank_that_aborts_while_leaving_keeps_the_run_completed(tmp_path: Path) -> None:
    """A rank killed in torch's teardown after every measurement (tests/inject/teardown_abort:
    SIGABRT in place of destroy_process_group, as CI once saw): every row is there and measured
    by every rank, so the run is completed and exits 0, with a warning naming the rank and its
    log, and the manifest's launch keeps the failure."""
    out = tmp_path / "run"
    inject = Path(__file__).resolve().parents[2] / "inject" / "teardown_abort"
    env = {**os.environ, "PYTHONPATH": str(inject), "DISTBENCH_TEST_TEARDOWN_ABORT": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "distbench", "allreduce", "--backend", "gloo", "--world-sizes",
         "2", "--sizes", "1K,64K", "--iters", "3", "--trials", "2", "--check", "--out", str(out)],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "warning: rank 1 failed (killed by SIGABRT) after " in done.stderr, done.stderr
    assert "every measurement of this launch had finished, so its 2 rows are kept" in done.stderr
    rows = read_rows(out / "results.csv")
    assert [(r["size_bytes"], r["wrong"]) for r in rows] == [("1024", "0"), ("65536", "0")]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    [launch] = manifest["launches"]
    assert launch["returncode"] != 0 and "killed by SIGABRT" in launch["failure"]
