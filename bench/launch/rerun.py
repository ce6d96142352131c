"""How a run that did not finish goes on: what it prints when it stops (after Ctrl-C or a closed
output: what is kept, and the exact `distbench ... --resume DIR` line), and what `--out DIR` says
when DIR already holds a run (continue it, or give a new one)."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from distbench.collectors.manifest import read_manifest
from distbench.collectors.schema import RESULTS_CSV, SPEC_JSON
from distbench.collectors.sink import read_rows
from distbench.launch.closed import silence_closed_outputs
from distbench.launch.progress import Render
from distbench.parse import UsageError
from distbench.primitives.facts import FACTS
from distbench.spec import RunSpec
from distbench.workloads import load_spec

NOT_RESUMABLE = "a sweep over several backends, or a distbench init run, cannot be resumed"


def resumable(run_dir: Path) -> bool:
    """A sweep over several backends (spec-<backend>.json) and an init run (its repetitions are
    fresh process groups, measured again as a whole) cannot be resumed (resume.resume_run)."""
    if any(Path(run_dir).glob("spec-*.json")):
        return False
    try:
        return json.loads((Path(run_dir) / SPEC_JSON).read_text()).get("kind") != "init"
    except (OSError, ValueError, AttributeError):
        return True


def shown_path(run_dir: Path) -> str:
    """The directory as the user would type it: relative below the working directory."""
    relative = os.path.relpath(run_dir)
    return relative if not relative.startswith("..") else str(run_dir)


def command_of(spec: RunSpec) -> str:
    """The command that resumes a run: a one-primitive comm run's own (`allreduce`), `sweep`
    for several primitives, the workload's kind otherwise (`ddp`; `overlap`, whose workload
    names primitives too: its own command resumes it, not theirs)."""
    primitives = tuple(getattr(spec.workload, "primitives", ()))
    if spec.kind != "comm" or not primitives:
        return spec.kind
    if len(primitives) == 1 and primitives[0] in FACTS:
        return FACTS[primitives[0]].command
    return "sweep"


def resume_command(spec: RunSpec, run_dir: str) -> str:
    """`distbench <command> --resume DIR` (command_of)."""
    return f"distbench {command_of(spec)} --resume {shlex.quote(run_dir)}"


def rest_line(spec: RunSpec, run_dir: Path, left: int = -1) -> str:
    """What an interrupted run prints last: the command that measures the rest, or why none can.
    On several nodes every node resumes, each from its own directory (node K > 0: OUT/node<K>,
    run.prepare_run_dir), so the line names node 0's and the others'. `left`: what the run has
    left (launch/planned.py run_left: planned rows not kept, and work no row marks, as a pairs
    size's standings; -1: not counted); with none left the command only marks it completed."""
    if not resumable(run_dir):
        return f"{NOT_RESUMABLE}: run it again with a new --out"
    if left == 0 and spec.launch.nnodes <= 1:
        command = resume_command(spec, shown_path(run_dir))
        return (
            "every measurement had finished before the interruption, so nothing is left to "
            f"measure: `{command}` marks the run completed"
        )
    line = f"to measure the rest: {resume_command(spec, shown_path(run_dir))}"
    if spec.launch.nnodes <= 1:
        return line
    home = run_dir.parent if spec.launch.node_rank > 0 else run_dir
    node_k = resume_command(spec, shown_path(home / "node<K>"))
    if spec.launch.node_rank < 0:  # c10d: global rank 0 may land on another node
        return (
            "a several-node run started without --node-rank cannot be resumed (global rank 0, "
            "which reads results.csv, may land on another node): run it again with --node-rank "
            "and a new --out"
        )
    return (
        f"to measure the rest, on every node at once: node 0 "
        f"{resume_command(spec, shown_path(home))}, node K > 0 {node_k}"
    )


OUT_OF_MEMORY = ("can't allocate memory", "out of memory", "OutOfMemoryError")
"""What a rank's failure says when an allocation failed (torch's CPU allocator, CUDA's)."""


def failed_rest_line(spec: RunSpec, run_dir: Path, manifest: dict[str, Any], left: int) -> str:
    """rest_line, unless a rank ran out of memory: a resume measures the same sizes and would
    run out again, so the line says so first."""
    rest = rest_line(spec, run_dir, left)
    failures = " ".join(str(launch.get("failure") or "") for launch in manifest["launches"])
    if not any(marker in failures for marker in OUT_OF_MEMORY):
        return rest
    return (
        "a rank ran out of memory, and a resume measures the same sizes: start again with smaller "
        f"--sizes, or free the memory first; {rest}"
    )


def held_run_error(run_dir: Path) -> UsageError:
    """What --out says of a directory that holds files: for an unfinished run, the command that
    continues it; for a completed one (or anything else), to give a new directory."""
    refusal = f"--out {run_dir} already holds files"
    new = "runs are never overwritten: give a new directory"
    try:
        manifest = read_manifest(run_dir)
        spec = load_spec(run_dir / SPEC_JSON) if (run_dir / SPEC_JSON).is_file() else None
    except (OSError, ValueError, KeyError, TypeError, UsageError):
        manifest = spec = None
    if manifest is None or spec is None:
        return UsageError(f"{refusal}; {new}")
    status = manifest.get("status")
    if status in ("completed", "wrong_results"):
        return UsageError(f"{refusal} of a {status.replace('_', ' ')} run; {new}")
    if not resumable(run_dir):
        return UsageError(f"{refusal} of a run that cannot be resumed ({NOT_RESUMABLE}); {new}")
    if spec.launch.nnodes > 1 and spec.launch.node_rank < 0:
        return UsageError(
            f"{refusal} of a several-node run started without --node-rank, which cannot be "
            f"resumed; {new}"
        )
    what = {"interrupted": "an interrupted run", "failed": "a failed run"}.get(
        str(status), "a run that has not finished (still running, or killed)"
    )
    command = resume_command(spec, str(run_dir))
    return UsageError(f"{refusal} of {what}: continue it with `{command}`, or give a new directory")


def report_closed_output(spec: RunSpec, run_dir: Path, kept: int, total: int, left: int) -> None:
    """After the output was closed: the run stopped as after Ctrl-C; what is kept and the
    command that continues, on stderr where it is still open. `left`: what the run has left
    (launch/planned.py run_left: planned rows, and work no row marks)."""
    silence_closed_outputs()
    lines = [
        f"the output was closed (its reader left, e.g. '| head') after the last measurement: "
        f"the run completed, its {kept} measurements kept",
    ]
    if left > 0:
        lines = [
            f"interrupted: the output was closed (its reader left, e.g. '| head'); {kept} of "
            f"{total} measurements are kept",
            rest_line(spec, run_dir, left),
        ]
    try:
        for line in lines:
            print(line, file=sys.stderr, flush=True)
    except BrokenPipeError:
        pass
    silence_closed_outputs()


def report_interrupt(
    spec: RunSpec, run_dir: Path, total: int, render: Render, kept: int, left: int
) -> None:
    """After Ctrl-C or SIGTERM: the table of every kept row and the command that continues;
    `kept` of the `total` planned measurements have a row, and the run has `left` to do
    (launch/planned.py kept_and_left)."""
    rows = read_rows(run_dir / RESULTS_CSV)
    print(
        f"interrupted: the process group was stopped; {kept} of {total} measurements are kept",
        file=sys.stderr,
        flush=True,
    )
    if rows:
        print(f"kept rows ({kept} of {total} measurements):", flush=True)
        print(render(rows), flush=True)
        print(flush=True)
    print(rest_line(spec, run_dir, left), file=sys.stderr, flush=True)
