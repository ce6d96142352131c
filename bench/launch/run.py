"""A run from start to finish: make its directory, write spec and manifest, launch one group per
world size while launch/progress.py shows the running measurement and prints each primitive's
table, close the manifest with the run's status, and after Ctrl-C print the kept rows and the
command that continues them (launch/rerun.py)."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from rich.console import Console

from distbench.collectors.manifest import (
    build_manifest,
    cpu_times,
    load_average,
    steal_share,
    utc_now,
    write_manifest,
)
from distbench.collectors.nodefacts_diff import node_warnings
from distbench.collectors.schema import (
    LOGS_DIR,
    MANIFEST_JSON,
    RESULTS_CSV,
    backend_spec_path,
    node_dir,
    worker_env_path,
    worker_facts_path,
)
from distbench.collectors.sink import finished_measurements, read_rows
from distbench.comm.nccl_table import render_nccl_table
from distbench.launch.closed import EXIT_PIPE, flushes, output_closed, silence_closed_outputs
from distbench.launch.planned import (
    kept_and_left,
    launch_left,
    planned_left,
    planned_of,
    unfinished,
)
from distbench.launch.progress import RunProgress, choose_mode
from distbench.launch.rerun import (
    failed_rest_line,
    held_run_error,
    report_closed_output,
    report_interrupt,
)
from distbench.launch.torchrun import LaunchResult, build_torchrun_command, run_launch
from distbench.parse import UsageError
from distbench.plan import measured_sizes, plan_launches
from distbench.spec import RunSpec
from distbench.workloads import WORKLOADS

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def default_run_dir(base: Path, name: str, label: str) -> Path:
    """results/<UTC time>-<name>[-label], with -2, -3 ... if that second is taken."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    stem = f"{stamp}-{name}" + (f"-{label}" if label else "")
    candidate, n = base / stem, 1
    while candidate.exists():
        n += 1
        candidate = base / f"{stem}-{n}"
    return candidate


def prepare_run_dir(out: str | None, name: str, label: str, node_rank: int = -1) -> Path:
    """Create the run directory; refuse one that holds a run (no run overwrites another).

    Several nodes with fixed node ranks may share one --out (a shared filesystem): node K > 0
    keeps its spec, manifest and logs in OUT/node<K>/; node 0 (global rank 0) writes OUT."""
    run_dir = Path(out) if out else default_run_dir(Path("results"), name, label)
    if node_rank > 0:
        run_dir = node_dir(run_dir, node_rank)
    if run_dir.exists() and not run_dir.is_dir():
        raise UsageError(f"--out {run_dir} is a file: give a new directory for the run")
    other_nodes = re.compile(r"node\d+")  # their subdirectories may appear first
    if run_dir.is_dir() and any(not other_nodes.fullmatch(p.name) for p in run_dir.iterdir()):
        raise held_run_error(run_dir)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        probe = run_dir / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        raise UsageError(f"cannot write the run directory {run_dir}: {error.strerror}") from None
    return run_dir


def cpu_cores() -> int:
    """Cores this process may run on (its affinity mask: taskset, cgroups' cpusets)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def oversubscription_warning(spec: RunSpec, cores: int) -> str | None:
    """One line when CPU ranks on this node outnumber its cores, else None."""
    ranks = spec.launch.nproc_per_node or max(spec.launch.world_sizes)
    if spec.launch.device != "cpu" or ranks <= cores:
        return None
    option = "--nproc-per-node" if spec.launch.nproc_per_node else "--world-sizes"
    return (
        f"warning: {ranks} ranks on {cores} CPU core{'s' * (cores != 1)}: ranks take turns on a "
        f"core, so times include waiting for the scheduler (use {option} up to {cores} for "
        "clean numbers)"
    )


def read_launch_json(path: Path) -> dict[str, Any] | None:
    """What a launch's ranks left for the manifest (their environment, torch's facts), or None."""
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return None


class Terminated(KeyboardInterrupt):
    """SIGTERM (a scheduler's cancel, a `kill`): stopped as Ctrl-C is, recorded apart."""


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def launch_order(
    first: RunSpec, first_path: Path, more: Sequence[RunSpec]
) -> Iterator[tuple[RunSpec, Path, int]]:
    """(spec, its file, world size) of every launch: `first` (spec.json), then each of `more` (a
    sweep's other backends, saved as spec-<backend>.json when its turn comes; the logs of the
    backend before move to logs/<backend>/ so that log names stay unique)."""
    previous: RunSpec | None = None
    for part in (first, *more):
        path = first_path
        if previous is not None:
            file_logs(Path(part.launch.run_dir), part_name(previous))
            path = backend_spec_path(Path(part.launch.run_dir), part_name(part))
            path.write_text(part.to_json())
        for planned in plan_launches(part.launch, part.kind):
            yield part, path, planned.world_size
        previous = part


def part_name(spec: RunSpec) -> str:
    """A later part's name in spec-<name>.json and logs/<name>/: its measurement tag (`nccl/`,
    `env1/`, `nccl/env1/` -> nccl, env1, nccl-env1), else its backend."""
    tag = str(getattr(spec.workload, "tag", "")).strip("/").replace("/", "-")
    return tag or spec.launch.backend


def file_logs(run_dir: Path, backend: str) -> None:
    """Move logs/*.log into logs/<backend>/ (a sweep over backends, before the next one)."""
    target = run_dir / LOGS_DIR / backend
    target.mkdir(parents=True, exist_ok=True)
    for log in (run_dir / LOGS_DIR).glob("*.log"):
        log.rename(target / log.name)


def execute(
    spec: RunSpec,
    title: str,
    more: Sequence[RunSpec] = (),
    manifest: dict[str, Any] | None = None,
    quiet: bool = False,
    table: str = "default",
) -> int:
    """Run every launch of `spec`, then of `more` (same run directory, e.g. other backends of a
    sweep); return the process exit code. `manifest`: a resumed run's, kept and extended (its
    tables are printed whole, kept rows included); `quiet`: no progress (--quiet), tables only;
    `table`: nccl-tests prints comm rows in nccl-tests' layout (--table)."""
    run_dir = Path(spec.launch.run_dir)
    spec_path = first_path = spec.save(run_dir)
    if manifest is None:
        body = dict(json.loads(spec.to_json()))  # the spec as the manifest records it
        manifest = build_manifest(spec.launch.run_id, [sys.argv[0], *sys.argv[1:]], body)
    write_manifest(run_dir, manifest)
    console = Console(stderr=True)
    warning = oversubscription_warning(spec, cpu_cores())
    if warning:
        print(warning, file=sys.stderr, flush=True)
    render = render_nccl_table if table == "nccl-tests" else WORKLOADS[spec.kind].render
    kept = read_rows(run_dir / RESULTS_CSV)
    parts = (spec, *more)  # `spec` is each launch's in the loop below
    total = sum(planned_rows(part) for part in parts)
    planned = [size for part in parts for size in planned_sizes(part)]
    is_planned = planned_of(parts)  # rows past a plan (pairs' confirmations) are extra
    mode = choose_mode(quiet, console)
    progress = RunProgress(run_dir, render, total, kept, mode, planned, is_planned)
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    status, code, stopped_by = "completed", EXIT_OK, "finished"
    try:
        with progress:
            for spec, spec_path, world_size in launch_order(spec, first_path, more):  # noqa: B020
                to_come = planned_left(spec, world_size, spec.launch.done)
                to_finish = unfinished(spec, world_size, spec.launch.done)  # reads ranks.csv
                remaining = to_come + to_finish  # launch_left, each part read once
                if remaining == 0 and spec.launch.done:
                    continue  # a resumed run finished this launch before
                before = len(read_rows(run_dir / RESULTS_CSV))
                measured = measured_sizes(spec.launch, spec.kind, world_size)
                past_plan = WORKLOADS[spec.kind].past_plan
                progress.start_launch(world_size, measured, to_come, to_finish, past_plan)
                result = run_launch(spec.launch, world_size, spec_path, progress.poll)
                progress.end_launch()
                record_launch(manifest, spec, spec_path, world_size, result)
                rows = read_rows(run_dir / RESULTS_CSV)[before:]
                left = launch_left(spec, world_size, finished_measurements(run_dir))
                problem = launch_problem(spec, rows, result, remaining, left)
                if problem is not None:
                    status, code, stopped_by = problem
                    break
            progress.flush()  # a resumed run's last kept table, when nothing was left to run
    except KeyboardInterrupt as stop:
        status, code = "interrupted", EXIT_INTERRUPTED
        stopped_by = "SIGTERM" if isinstance(stop, Terminated) else "Ctrl-C (SIGINT)"
        kept, left = kept_and_left(parts, is_planned, run_dir)
        report_interrupt(spec, run_dir, total, render, kept, left)
    except BrokenPipeError:  # the reader of the output left (`| head`): an interruption
        if not output_closed():  # a pipe of something else: a failure like any other
            status, code, stopped_by = "failed", EXIT_FAILED, "error: BrokenPipeError"
            raise
        kept, left = kept_and_left(parts, is_planned, run_dir)
        # closed after the last measurement (`| true`): the run is whole, its last lines unread
        status, code = ("completed", EXIT_OK) if left == 0 else ("interrupted", EXIT_PIPE)
        stopped_by = "finished" if left == 0 else "output closed (its reader left: | head)"
        report_closed_output(spec, run_dir, kept, total, left)
    except BaseException as error:  # anything else (a full disk, a bug): never "completed"
        status, code = "failed", EXIT_FAILED
        stopped_by = f"error: {type(error).__name__}: {error}"[:300]
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
        manifest["status"] = status
        manifest["stopped_by"] = stopped_by
        manifest["ended_utc"] = utc_now()
        manifest["load_avg_end"] = load_average()
        manifest["cpu_steal_share"] = steal_share(manifest.get("cpu_times_start"), cpu_times())
        write_manifest(run_dir, manifest)
    if code == EXIT_PIPE or (status == "completed" and not flushes(sys.stdout)):
        return code
    try:
        closing_lines(spec, run_dir, manifest, status, total, parts, is_planned)
    except BrokenPipeError:  # the output closed after the last measurement: the run is whole
        silence_closed_outputs()
    return code


def closing_lines(
    spec: RunSpec, run_dir: Path, manifest: dict[str, Any], status: str, total: int,
    parts: Sequence[RunSpec], is_planned: Callable[[str], bool],
) -> None:  # fmt: skip
    """What a run prints after its last launch: what a failed run keeps and the command that
    continues it, the nodes' warnings, and where the run is."""
    if status == "failed" and (run_dir / RESULTS_CSV).exists():  # a rank died: go on from here
        kept, left = kept_and_left(parts, is_planned, run_dir)
        print(f"{kept} of {total} measurements are kept", file=sys.stderr, flush=True)
        print(failed_rest_line(spec, run_dir, manifest, left), file=sys.stderr, flush=True)
    for line in node_warnings(manifest):  # one node with another driver, a slower link ...
        print(line, file=sys.stderr, flush=True)
    if (run_dir / RESULTS_CSV).exists():
        print(f"run directory: {run_dir}  ({RESULTS_CSV}, samples.csv, {MANIFEST_JSON}, logs/)")
    else:  # a node without global rank 0: the rows are the writer's
        print(f"run directory: {run_dir}  ({MANIFEST_JSON}, logs/; the rows are on rank 0's node)")
    sys.stdout.flush()


def planned_rows(spec: RunSpec) -> int:
    """Rows a whole run of `spec` writes, over all its launches (the progress total)."""
    counter = WORKLOADS[spec.kind].plan_size
    return sum(
        counter(spec.workload, size)
        for planned in plan_launches(spec.launch, spec.kind)
        for size in planned.measured
    )


def planned_sizes(spec: RunSpec) -> list[int]:
    """The size asked for of every measurement planned_rows counts (the ETA's plan): a workload
    with sizes measures each as often (comm: cases x apis x dtypes x modes); none without."""
    sizes = tuple(getattr(spec.workload, "sizes", ()) or ())
    if not sizes:
        return []
    rows = planned_rows(spec)
    if rows % len(sizes):
        return []
    return [int(size) for size in sizes for _ in range(rows // len(sizes))]


def record_launch(
    manifest: dict[str, Any], spec: RunSpec, spec_path: Path, world_size: int, result: LaunchResult
) -> None:
    """Add a finished launch (its command, exit code, rows, the ranks' environment) to the
    manifest and write it."""
    run_dir = Path(spec.launch.run_dir)
    env = read_launch_json(worker_env_path(run_dir, world_size))
    manifest.update(read_launch_json(worker_facts_path(run_dir, world_size)) or {})
    manifest["worker_env"] = env if env is not None else manifest.get("worker_env")
    manifest["launches"].append(
        {
            "world_size": world_size,
            "backend": spec.launch.backend,
            "returncode": result.returncode,
            "rows": result.rows,
            "failure": result.failure,
            "command": build_torchrun_command(spec.launch, world_size, spec_path),
            "worker_env": env,
        }
    )
    write_manifest(run_dir, manifest)


def launch_problem(
    spec: RunSpec, rows: Sequence[dict[str, str]], result: LaunchResult, expected: int, left: int
) -> tuple[str, int, str] | None:
    """Print what ended a launch badly and return the run's (status, exit code, the manifest's
    `stopped_by`); None if fine.
    A rank that fails after the launch had `expected` left and nothing is `left` now
    (launch/planned.py: every planned row written, each once every rank had finished it, and no
    work past them unfinished) failed while leaving: a warning, and the run goes on (the
    manifest's launch keeps the failure)."""
    console = Console(stderr=True)
    where = f"world size {result.world_size}"
    if not rows and spec.launch.nnodes > 1 and result.returncode == 0:
        console.print(
            "this node did not hold global rank 0: the rows are in the run directory "
            "of the node that did (its host is in this node's logs)",
            markup=False,
            highlight=False,
            soft_wrap=True,  # one line, however narrow the terminal
        )
    wrong = [row for row in rows if int(row.get("wrong", "-1") or -1) > 0]
    if wrong:
        first = wrong[0]
        console.print(
            f"error: --check found {first['wrong']} wrong elements in {first['primitive']} "
            f"{first['dtype']} size={first['size_bytes']} at world size {result.world_size}: "
            "these results are not correct",
            markup=False,
            highlight=False,
        )
        return "wrong_results", EXIT_FAILED, f"{where}: --check found wrong results"
    if result.failure and expected > 0 and left == 0:
        console.print(
            f"warning: {result.failure}; every measurement of this launch had finished, so its "
            f"{len(rows)} rows are kept and the run goes on",
            markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip
        return None
    if result.failure:
        # soft_wrap: no newlines inside the log paths of the message
        console.print(f"error: {result.failure}", markup=False, highlight=False, soft_wrap=True)
        return "failed", EXIT_FAILED, f"{where}: {result.failure}"[:300]
    return None
