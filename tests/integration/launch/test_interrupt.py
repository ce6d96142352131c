"""Ctrl-C and resume as a user meets them (#21 §3), on real 2-rank gloo sweeps: the interrupted run
prints the table of its kept rows and the exact command that continues it; the same command into
the same --out points to that command; the resumed run prints the whole table and its progress.
The one Ctrl-C + resume launch of the suite: it also holds the fault checks (every worker and
torchrun gone, resumes recorded, rows appended, no orphan samples) that test_faults.py had."""

from __future__ import annotations

import json
import re
import shlex
import signal
import time
from pathlib import Path

import pytest

from distbench.collectors.sink import read_rows
from tests.conftest import run_cli, start_until_rows
from tests.integration.launch.test_faults import alive, assert_rows_parse, processes_using

# 2 primitives x 7 sizes of 300 iterations: seconds of work, so the interrupt lands mid-run.
SWEEP = ["sweep", "--primitives", "allreduce,broadcast", "--backend", "gloo", "--world-sizes", "2"]
SIZES = ["--min-size", "1K", "--max-size", "64K", "--factor", "2"]
SLOW = ["--iters", "300", "--warmup", "1", "--trials", "2"]
SIZE_NAMES = ["1K", "2K", "4K", "8K", "16K", "32K", "64K"]


def table_rows(stdout: str, primitive: str) -> list[str]:
    """The size cells of every data line of `primitive`'s tables in stdout."""
    sizes, inside = [], False
    for line in stdout.splitlines():
        title = re.match(r"# (\S+)  ", line)  # a table's title line; its column line is '#   '
        if title:
            inside = title.group(1) == primitive
        elif inside and line.strip() and not line.startswith("#"):
            sizes.append(line.split()[0])
        elif not line.strip():
            inside = False
    return sizes


def worker_pid(out: Path, rank: int) -> int:
    """The pid of `rank`'s worker, from the start line of its log (rows are already written)."""
    text = (out / "logs" / f"ws2-rank{rank}.log").read_text(errors="replace")
    return int(re.findall(r"start pid=(\d+)", text)[-1])


@pytest.mark.slow
def test_ctrl_c_prints_the_kept_rows_and_the_resume_command_that_completes_them(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    command = [*SWEEP, *SIZES, *SLOW, "--out", str(out)]
    proc = start_until_rows(command, out, 3, tmp_path)
    pids = [worker_pid(out, rank) for rank in (0, 1)]
    proc.send_signal(signal.SIGINT)
    begin = time.monotonic()
    stdout, stderr = proc.communicate(timeout=60)
    took = time.monotonic() - begin
    assert proc.returncode == 130, stderr
    assert took < 10, f"exit took {took:.1f} s after Ctrl-C"
    assert "interrupted" in stderr
    # every worker and torchrun gone with the CLI (was test_faults' Ctrl-C test)
    assert not any(alive(pid) for pid in pids)
    assert processes_using(out) == []
    kept = assert_rows_parse(out)
    assert 3 <= len(kept) < 14, "the interrupt must land mid-run"
    stopped = json.loads((out / "manifest.json").read_text())
    assert (stopped["status"], stopped["stopped_by"]) == ("interrupted", "Ctrl-C (SIGINT)")
    assert not list((out / "logs").glob("*.alive")), "a stopped rank's heartbeat was left"

    # the kept rows' table, every kept row once after the heading
    heading = f"kept rows ({len(kept)} of 14 measurements):"
    assert heading in stdout, stdout
    after = stdout.split(heading, 1)[1]
    kept_sizes = [r["size_bytes"] for r in kept if r["primitive"] == "all_reduce"]
    assert len(table_rows(after, "all_reduce")) == len(kept_sizes), stdout
    assert f"{len(kept)} of 14 measurements are kept" in stderr
    resume_line = stderr.strip().splitlines()[-1]
    assert resume_line == "to measure the rest: distbench sweep --resume run", stderr

    # the same command into the same directory points to the resume command
    again = run_cli(*command, cwd=tmp_path)
    assert again.returncode == 2
    assert again.stderr.strip().splitlines() == [
        f"distbench: error: --out {out} already holds files of an interrupted run: continue it "
        f"with `distbench sweep --resume {out}`, or give a new directory"
    ]

    # the printed command, run as printed, shows progress and the whole table
    resumed = run_cli(*shlex.split(resume_line.split(": ", 1)[1])[1:], cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    done = [line for line in resumed.stderr.splitlines() if "] done " in line]
    assert len(done) == 14 - len(kept), resumed.stderr
    assert done[0].startswith(f"[{len(kept) + 1}/14] done "), done
    assert done[-1].startswith("[14/14] done broadcast float32 throughput size=64K"), done
    assert table_rows(resumed.stdout, "all_reduce") == SIZE_NAMES, resumed.stdout
    assert table_rows(resumed.stdout, "broadcast") == SIZE_NAMES, resumed.stdout
    rows = assert_rows_parse(out)
    ids = [r["measurement"] for r in rows]
    assert ids == [f"ws2/i{k}" for k in range(14)]  # every measurement once, in plan order
    assert rows[: len(kept)] == kept  # appended, nothing rewritten
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    assert manifest["resumes"][0]["previous_status"] == "interrupted"
    assert manifest["resumes"][0]["previous_stopped_by"] == "Ctrl-C (SIGINT)"
    assert manifest["stopped_by"] == "finished"
    assert manifest["resumes"][0]["measurements_kept"] == len(kept)
    max_samples = [r for r in read_rows(out / "samples.csv") if r["rank"] == "-1"]
    assert sorted({r["measurement"] for r in max_samples}) == sorted(ids)
    assert len(max_samples) == 2 * len(ids)  # two trials each, no orphans of the cut measurement

    # a completed run is not resumed: a new directory, please
    finished = run_cli(*command, cwd=tmp_path)
    assert finished.returncode == 2
    assert re.fullmatch(
        r"distbench: error: --out \S+ already holds files of a completed run; runs are never "
        r"overwritten: give a new directory",
        finished.stderr.strip(),
    ), finished.stderr


def test_an_out_with_other_files_is_refused_without_a_resume_hint(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    result = run_cli("allreduce", "--sizes", "1K", "--out", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"distbench: error: --out {tmp_path} already holds files; runs are never overwritten: "
        "give a new directory"
    )
