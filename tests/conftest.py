"""Shared helpers: run the real `distbench` CLI in a fresh interpreter, as a user would; run a
function on the ranks of a real gloo group of forked processes."""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import queue as queue_module
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from distbench.ports import free_ports
from tests.paths import DATA

# Run inside a GitHub Actions job, the suite must not write that job's summary or annotations:
# distbench compare turns --github on by itself when GITHUB_ACTIONS is true (the tests that mean
# it set it themselves: tests/unit/reports/test_compare_ci.py). Subprocesses inherit this.
for _github in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
    os.environ.pop(_github, None)

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    # A shell starts a background job (`pytest &`, `nohup ... &`) with SIGINT ignored, and every
    # child inherits that: the Ctrl-C tests' CLI would never see their SIGINT and run to the end.
    # A handler, unlike SIG_IGN, is reset to the default at exec, so the CLIs get Ctrl-C again.
    signal.signal(signal.SIGINT, signal.default_int_handler)


def as_another_night(night: Path, hours: int = 1) -> Path:
    """A copied night made another night's: every manifest's start moved `hours` later, and its
    first row's times a millionth apart, as a night measured later would have them (a baseline
    window holds a launch once, known by its run id, start and host, or its results:
    reports/compare/sides.py launch_keys)."""
    import csv
    import json
    from datetime import datetime

    for results in night.rglob("results.csv"):
        with results.open(newline="") as handle:
            rows = list(csv.DictReader(handle))
        if rows and rows[0].get("time_us_p50"):
            rows[0]["time_us_p50"] = repr(float(rows[0]["time_us_p50"]) * (1 + 1e-6))
            with results.open("w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
                writer.writeheader()
                writer.writerows(rows)

    for path in night.rglob("manifest.json"):
        manifest = json.loads(path.read_text())
        if manifest.get("started_utc"):
            start = datetime.fromisoformat(str(manifest["started_utc"]).replace("Z", "+00:00"))
            later = start + timedelta(hours=hours)
            manifest["started_utc"] = later.strftime("%Y-%m-%dT%H:%M:%SZ")
            path.write_text(json.dumps(manifest))
    return night


def free_port() -> int:
    """A TCP port free now (a rendezvous endpoint for a test's own launches), outside the kernel's
    ephemeral range as the product draws its own: gloo's listeners cannot take it meanwhile."""
    return free_ports(1)[0]


def run_cli(
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    return subprocess.run(
        [sys.executable, "-m", "distbench", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
        check=False,
    )


def start_until_rows(
    argv: list[str], out: Path, rows: int, cwd: Path, timeout_s: float = 120
) -> subprocess.Popen[str]:
    """`python -m distbench ARGV` started in `cwd` (stdout and stderr piped, text), returned once
    out/results.csv holds `rows` rows (or `timeout_s` passed): a run to interrupt mid-way."""
    from distbench.collectors.sink import read_rows

    proc = subprocess.Popen(
        [sys.executable, "-m", "distbench", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")},
    )
    deadline = time.monotonic() + timeout_s
    while len(read_rows(out / "results.csv")) < rows and time.monotonic() < deadline:
        time.sleep(0.02)
    return proc


def run_in_process(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in this process, for commands that launch nothing (report, compare, history): the
    same exit code, stdout and stderr as run_cli without a fresh interpreter importing torch,
    pandas and matplotlib (~2-3 s of CPU a call)."""
    from distbench.cli.app import run_cli as run_here

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_here(list(args))
    return subprocess.CompletedProcess(["distbench", *args], code, out.getvalue(), err.getvalue())


def usage_error_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the CLI in-process on bad input; assert exit 2 and exactly one 'distbench: error:'
    line on stderr, and return that line."""
    from distbench.cli.app import run_cli as run_in_process

    code = run_in_process(argv)
    stderr = capsys.readouterr().err
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("distbench: error: "), lines[0]
    return lines[0]


@pytest.fixture
def cli():
    return run_cli


def run_on_gloo_ranks(
    work: Callable[[int, int], Any], world_size: int, store: Path, timeout: float = 240
) -> list[Any]:
    """work(rank, world_size) on `world_size` forked processes joined in a real gloo group (file
    store at `store`); what each rank returned, in rank order."""
    fork = multiprocessing.get_context("fork")
    queue = fork.Queue()
    # daemon: a rank that hangs dies with pytest instead of holding its exit (multiprocessing
    # joins every non-daemon child at exit; one hung rank once held CI's pytest to the job's limit).
    ranks = [
        fork.Process(
            target=gloo_rank, args=(work, rank, world_size, str(store), queue), daemon=True
        )
        for rank in range(world_size)
    ]
    for proc in ranks:
        proc.start()
    results: dict[int, Any] = {}
    try:
        for _ in ranks:
            rank, result = queue.get(timeout=timeout)
            results[rank] = result
    except queue_module.Empty:
        missing = sorted(set(range(world_size)) - set(results))
        pytest.fail(f"ranks {missing} of {world_size} gave no result within {timeout:.0f} s")
    finally:
        for proc in ranks:
            proc.join(60 if len(results) == world_size else 0)
            if proc.is_alive():
                proc.kill()
    return [results[rank] for rank in range(world_size)]


def gloo_rank(
    work: Callable[[int, int], Any], rank: int, size: int, store: str, queue: Any
) -> None:
    """One rank of run_on_gloo_ranks: join, put (rank, work's result), leave."""
    import torch
    import torch.distributed as dist

    # Forked from a pytest that may have run torch's OpenMP pool: that pool's threads do not exist
    # in the child, and a parallel region there can wait on them forever. One thread never asks.
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"file://{store}", rank=rank, world_size=size,
        timeout=timedelta(seconds=120),
    )  # fmt: skip
    try:
        queue.put((rank, work(rank, size)))
    finally:
        dist.destroy_process_group()


@dataclass(frozen=True)
class TwoNodes:
    out: Path
    endpoint: str
    nodes: list[subprocess.CompletedProcess[str]]


@pytest.fixture(scope="session")
def frozen_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`distbench report tests/data/cluster-a tests/data/cluster-b`, built in-process once a
    session: the unit tests read its page, Markdown and figures, integration screenshots it.
    Read only."""
    from distbench.cli.app import run_cli as run_app
    from distbench.reports.report.figures import drawing

    out = tmp_path_factory.mktemp("frozen-report")
    clusters = [str(DATA / "cluster-a"), str(DATA / "cluster-b")]
    with pytest.MonkeyPatch.context() as patch:
        # Figures drawn in this process: tests/unit starts no process, and a session fixture is
        # built before its per-test refusal applies (forked drawing: test_report_drawing.py).
        patch.setattr(drawing, "forks", lambda: False)
        assert run_app(["report", *clusters, "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="session")
def two_nodes_2x2(tmp_path_factory: pytest.TempPathFactory) -> TwoNodes:
    """One 2-node loopback run shared by the suite (launched on first use): 2 nodes x 2 ranks,
    static rendezvous (--node-rank), one shared --out, allreduce at world sizes 2 (node 0 alone)
    and 4 (both), 1K and 16K, 3 trials, --rank-samples node. Tests read it; a test that changes
    its files works on a copy."""

    out = tmp_path_factory.mktemp("two-nodes") / "run"
    endpoint = f"127.0.0.1:{free_port()}"
    command = ["allreduce", "--backend", "gloo", "--sizes", "1K,16K", "--iters", "3"]
    command += ["--warmup", "1", "--trials", "3", "--timeout", "60", "--quiet"]
    command += ["--world-sizes", "2,4", "--nnodes", "2", "--nproc-per-node", "2"]
    command += ["--rdzv-endpoint", endpoint, "--rank-samples", "node", "--out", str(out)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "distbench", *command, "--node-rank", str(node)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for node in (0, 1)
    ]
    nodes = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=300)
        nodes.append(subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr))
        assert proc.returncode == 0, stderr
    return TwoNodes(out, endpoint, nodes)


@dataclass(frozen=True)
class CliRun:
    out: Path
    done: subprocess.CompletedProcess[str]


@pytest.fixture(scope="session")
def allreduce_2rank(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    """One unlabelled 2-rank gloo allreduce shared by the suite (launched on first use): 1K and
    64K, --check, --mode both (4 rows), 4 iters, 1 warmup, 3 trials, into `.../run` (run_id
    'run'). Tests read it; a test that changes its files works on a copy."""
    out = tmp_path_factory.mktemp("allreduce-2rank") / "run"
    done = run_cli(*ALLREDUCE_2RANK, "--out", str(out))
    assert done.returncode == 0, done.stderr + done.stdout
    return CliRun(out, done)


ALLREDUCE_2RANK = (
    "allreduce", "--backend", "gloo", "--world-sizes", "2", "--sizes", "1K,64K", "--check",
    "--mode", "both", "--iters", "4", "--warmup", "1", "--trials", "3",
)  # fmt: skip
"""The command of `allreduce_2rank`, but --out (a test that needs a second run of the same
case, e.g. with --env, adds its own flags)."""


TINY_SWEEP = (
    "sweep", "--primitives", "allreduce,broadcast", "--backend", "gloo", "--world-sizes", "2",
    "--sizes", "1K,16K", "--iters", "3", "--warmup", "1", "--trials", "3",
    "--order", "interleaved", "--check", "--quiet",
)  # fmt: skip
"""The command of the `tiny_sweep(s)` runs, but --out: 4 rows (all_reduce's root empty,
broadcast's 0), trials interleaved, results checked."""


@pytest.fixture(scope="session")
def tiny_sweep(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    """One real 2-rank gloo TINY_SWEEP, shared by the suite (launched on first use) into
    `.../one`. Tests read it; a test that changes its files works on a copy."""
    out = tmp_path_factory.mktemp("tiny-sweeps") / "one"
    done = run_cli(*TINY_SWEEP, "--out", str(out))
    assert done.returncode == 0, done.stderr
    return CliRun(out, done)


@pytest.fixture(scope="session")
def tiny_sweeps(tiny_sweep: CliRun) -> list[Path]:
    """Three TINY_SWEEP runs: `tiny_sweep`'s and two more beside it (`two`, `three`)."""
    runs = [tiny_sweep.out]
    for name in ("two", "three"):
        out = tiny_sweep.out.parent / name
        done = run_cli(*TINY_SWEEP, "--out", str(out))
        assert done.returncode == 0, done.stderr
        runs.append(out)
    return runs
