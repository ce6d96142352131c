"""`--resume DIR`: continue an interrupted run after its last finished measurement.

The plan is deterministic (measurement ids `ws<N>/i<k>`), so the ids in results.csv say exactly
what is done; the workers skip them and rank 0 appends the rest. A measurement's rank -1 samples
are written before its row (the row commits it), so samples of a measurement cut short are
dropped here before it is measured again. The manifest keeps its history under `resumes`.
"""

from __future__ import annotations

import csv
import os
import sys
from dataclasses import replace
from pathlib import Path

from distbench.collectors.manifest import read_manifest, utc_now
from distbench.collectors.schema import MANIFEST_JSON, SAMPLES_CSV, SPEC_JSON
from distbench.collectors.sink import finished_measurements
from distbench.launch.rerun import command_of, resume_command
from distbench.launch.run import execute
from distbench.parse import UsageError
from distbench.spec import RunSpec
from distbench.workloads import WORKLOADS, load_spec


def drop_orphan_samples(run_dir: Path, done: set[str]) -> int:
    """Remove samples.csv rows of measurements without a results row; returns how many."""
    path = run_dir / SAMPLES_CSV
    if not path.exists():
        return 0
    with open(path, newline="", encoding="utf-8") as handle:
        lines = list(csv.reader(handle))
    if not lines:
        return 0
    header, body = lines[0], lines[1:]
    column = header.index("measurement") if "measurement" in header else 0
    kept = [line for line in body if line and line[column] in done]
    if len(kept) == len(body):
        return 0
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows([header, *kept])
    os.replace(tmp, path)
    return len(body) - len(kept)


def load_resumable(path_text: str) -> tuple[RunSpec, dict[str, object]]:
    run_dir = Path(path_text)
    if not (run_dir / SPEC_JSON).is_file():
        raise UsageError(
            f"--resume {run_dir}: no {SPEC_JSON} there: give the directory of an interrupted run"
        )
    try:
        manifest = read_manifest(run_dir)
        spec = load_spec(run_dir / SPEC_JSON)
    except (OSError, ValueError, KeyError, TypeError, UsageError) as error:
        raise UsageError(
            f"--resume {run_dir}: cannot read its spec or manifest ({error})"
        ) from None
    if manifest is None:
        raise UsageError(
            f"--resume {run_dir}: cannot read its spec or manifest (no {MANIFEST_JSON})"
        )
    return spec, manifest


def resume_run(
    path_text: str, command: str | None = None, quiet: bool = False, table: str = "default"
) -> int:
    """Continue the run in `path_text` with its own spec; return the exit code. `command`: the
    primitive or workload whose command asked (None: a sweep, which resumes any kind); `quiet`:
    no progress display. Every command's --resume comes here (cli/run.py run_workload). The
    tables it prints are the whole run's, the kept rows with the new ones."""
    if any(Path(path_text).glob("spec-*.json")):
        raise UsageError(
            f"--resume {path_text}: a sweep over several backends cannot be resumed; run its "
            "config again with a new --out"
        )
    spec, manifest = load_resumable(path_text)
    if spec.kind == "init":  # a resumed init would measure every method again, beside the rows
        raise UsageError(
            f"--resume {path_text}: a distbench init run cannot be resumed (each repetition is a "
            "fresh process group, measured again as a whole): run it again with a new --out"
        )
    if manifest.get("status") == "completed":  # after init's own refusal, which is the reason
        raise UsageError(f"--resume {path_text}: that run completed; nothing is left to measure")
    if spec.launch.nnodes > 1 and spec.launch.node_rank < 0:
        raise UsageError(
            f"--resume {path_text}: a several-node run started without --node-rank cannot be "
            "resumed (global rank 0, which reads results.csv, may land on another node): run it "
            "again with --node-rank and a new --out"
        )
    if command is not None and command not in WORKLOADS[spec.kind].resumed_by(spec.workload):
        raise UsageError(
            f"--resume {path_text}: that run was started by `distbench "
            f"{command_of(spec)}`: resume it with `{resume_command(spec, path_text)}`"
        )
    primitives = primitives_of(spec)
    run_dir = Path(path_text).resolve()
    done = finished_measurements(run_dir)
    dropped = drop_orphan_samples(run_dir, set(done))
    launch = replace(spec.launch, run_dir=str(run_dir), done=tuple(done))
    resumes = manifest.setdefault("resumes", [])
    assert isinstance(resumes, list)
    resumes.append(
        {
            "started_utc": utc_now(),
            "command": [sys.argv[0], *sys.argv[1:]],
            "previous_status": manifest.get("status"),
            "previous_stopped_by": manifest.pop("stopped_by", None),
            "measurements_kept": len(done),
            "orphan_samples_dropped": dropped,
        }
    )
    manifest["status"] = "running"
    manifest["ended_utc"] = None
    print(f"resuming {run_dir}: {len(done)} measurements kept", file=sys.stderr)
    title = "+".join(primitives)
    resumed = replace(spec, launch=launch)
    return execute(resumed, title=title, manifest=manifest, quiet=quiet, table=table)


def primitives_of(spec: RunSpec) -> tuple[str, ...]:
    """The primitives a comm run measures, or the workload kind (e.g. ('ddp',))."""
    return tuple(getattr(spec.workload, "primitives", ())) or (spec.kind,)
