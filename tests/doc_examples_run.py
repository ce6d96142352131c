"""The world the examples of the manual run in (tests/integration/test_examples.py), and how one
runs: a stand-in clone at ~/distbench holding what the examples name (results/today, RUN, a baseline
`nightly`, expected.toml ...), copied from the frozen runs of tests/data; plain `distbench` commands
run in this process through the console entry's own function, the rest through bash."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from distbench.cli.app import run_cli
from tests.doc_examples import ROOT, Example, reference_file, words

# The world: what the examples name, made once, copied for every block.
RUN_STAND_INS = {
    "RUN": "cluster-b/allreduce",
    "BASELINE_RUN": "cluster-a/allreduce",
    "NEW_RUN": "cluster-b/allreduce",
    "results/cluster-a": "cluster-a/allreduce",
    "results/cluster-b": "cluster-b/allreduce",
    "results/RUN": "cluster-b/allreduce",
    "results/today": "cluster-b/allreduce",
    "results/monday": "cluster-a/allreduce",
    "results/tuesday": "cluster-b/allreduce",
    "results/last-night": "cluster-b/allreduce",
    "results/20261129T101500Z-all_reduce": "cluster-a/allreduce",
    "results/20261129T020000Z-sweep": "cluster-a/allreduce",
    "results/20261130T020000Z-sweep": "cluster-b/allreduce",
    "results/20261201T020000Z-sweep": "cluster-b/allreduce",
    "results/nightly-20261130T020000Z": "cluster-a/allreduce",
    "results/nightly-20261201T020000Z": "cluster-b/allreduce",
    "r-1-c10d": "cluster-a/allreduce",  # docs/apis.md: the runs its (long) loop would make
    "r-1-functional": "cluster-b/allreduce",
}
"""Run directories the examples name, and the frozen fixture run (tests/data) standing in."""
BASELINES = {
    "nightly": "cluster-a/allreduce",
    "nightly-old": "cluster-a/allreduce",
    "a100-main": "cluster-a/allreduce",
}


def build_world(home: Path, tiny_sweep: str) -> None:
    """The template every block's world is copied from (`tiny_sweep`: the shrunk nightly matrix)."""
    clone = home / "distbench"
    shutil.copytree(ROOT / "ci", clone / "ci")
    shutil.copytree(ROOT / "tests" / "data", clone / "tests" / "data")
    shutil.copytree(ROOT / "tests" / "inject", clone / "tests" / "inject")
    for name, fixture in RUN_STAND_INS.items():
        shutil.copytree(ROOT / "tests" / "data" / fixture, clone / name)
    (home / "tiny-sweep.toml").write_text(tiny_sweep)
    (clone / "ci" / "my-sweep.toml").write_text(tiny_sweep)
    shutil.copy(clone / "ci" / "thresholds-example.toml", clone / "ci" / "thresholds-a100.toml")
    (clone / "expected.toml").write_text(reference_file())
    with at(clone):
        for name, fixture in BASELINES.items():
            assert (
                invoke(["baseline", "save", str(ROOT / "tests/data" / fixture), "--name", name])[0]
                == 0
            )
    (home / "elsewhere").mkdir()
    cut_night(clone / "results" / "nightly-RUN", home / "tiny-sweep.toml")


def cut_night(night: Path, config: Path) -> None:
    """A night of ci/nightly.sh cut short after its first launch (nightly.state says partial):
    what `ci/nightly.sh --resume results/nightly-RUN` finishes."""
    shutil.copytree(ROOT / "tests" / "data" / "cluster-a" / "allreduce", night / "launch-1")
    manifest = json.loads((night / "launch-1" / "manifest.json").read_text())
    manifest["status"] = "completed"
    (night / "launch-1" / "manifest.json").write_text(json.dumps(manifest, indent=1))
    state = ["status=partial", "launches=2", f"config={config}", "sweep_args=", "resumed=0"]
    (night / "nightly.state").write_text("\n".join(state) + "\n")


def interrupted_ddp_run(out: Path) -> None:
    """A ddp run cut after its first row, as Ctrl-C leaves one (its last row and status undone)."""
    argv = ["ddp", "--backend", "gloo", "--world-sizes", "2", "--strategies", "ddp,ddp-nocomm"]
    rc, output = invoke([*argv, "--steps", "2", "--quiet", "--out", str(out)])
    assert rc == 0, output
    lines = (out / "results.csv").read_text().splitlines(keepends=True)
    (out / "results.csv").write_text("".join(lines[:-1]))
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["status"] = "interrupted"
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))


@contextlib.contextmanager
def at(directory: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(before)


def invoke(argv: list[str]) -> tuple[int, str]:
    """`distbench ARGV` in this process, as the console entry runs it; (exit code, output)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            code = run_cli(argv)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
    return code, out.getvalue()


GATES = re.compile(
    r"distbench compare|--fail-on-(regression|outlier)|ci/nightly\.sh(?!.*--bootstrap)"
)
"""Commands whose exit 1 (regressed) or 4 (rows missing) is a verdict, not a failure."""
ACCEPTANCE = re.compile(r"^distbench acceptance\b")
ACCEPTANCE_VERDICT = re.compile(r"^acceptance: FAIL \(\d+ of \d+ nodes?\); verdict: ", re.M)
"""`distbench acceptance`'s exit 1 is a verdict (a node failed the health check) when node 0
printed it: on a loaded 2-core box, a pair measured in a burst of load can make a rank an
outlier. Any other exit 1 of it is a failure."""


def run_example(
    example: Example, home: Path, shrink: Callable[[str], tuple[str, list[str]]]
) -> tuple[str, list[str], int, str]:
    """Run one example in the world at `home`, shrunk by `shrink`: (the command run, what shrank
    it, exit code, output)."""
    command, applied = shrink(example.text)
    cwd = home / ("elsewhere" if "~/distbench" in command else "distbench")
    first_save(command, cwd / "baselines")
    resumed = re.search(r"--resume (\S+)", command)
    if resumed and not (cwd / resumed[1]).exists():  # the page's interrupted run, made for it
        with at(cwd):
            interrupted_ddp_run(cwd / resumed[1])
    argv = words(command) if not example.context else None
    if argv is not None:
        with at(cwd):
            code, output = invoke(argv[1:])
    else:
        line = command
        if " & " in command:  # both must pass: the one in the background too
            line = both_sides(*command.split(" & ", 1))
        script = "; ".join([*example.context, line])
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        code, output = done.returncode, done.stdout + done.stderr
    return command, applied, code, output


def both_sides(background: str, foreground: str) -> str:
    """A line that runs `background &` then `foreground`, keeps each one's output apart and
    prints them one after the other, each headed by its exit code (the background last: a
    failure's tail is its own, not the other side's closing lines); exits with the first non-zero
    code, the background's first."""
    keep = "d=$(mktemp -d)"
    run = f"( {background} ) > $d/bg 2>&1 & f=$!; ( {foreground} ) > $d/fg 2>&1; s=$?"
    show = (
        'wait $f; f=$?; echo "--- in the foreground: exit $s"; cat $d/fg; '
        'echo "--- in the background: exit $f"; cat $d/bg; rm -rf $d'
    )
    return f"{keep}; {run}; {show}; exit $((f ? f : s))"


def first_save(command: str, store: Path) -> None:
    """A save without --force, or a bootstrap, is a user's first: the store has no such name yet
    (the template has one, for the examples that compare against it)."""
    if "baseline save" in command and "--force" not in command:
        name = re.search(r"--name (\S+)", command)
        shutil.rmtree(store / (name[1] if name else "nightly"), ignore_errors=True)
    elif re.search(r"nightly\.sh.*--bootstrap", command):
        name = re.search(r"--baseline (\S+)", command)
        shutil.rmtree(store / (name[1] if name else "nightly"), ignore_errors=True)


def passed(command: str, code: int, output: str) -> bool:
    ok = code == 0 or (code in (1, 4) and GATES.search(command) is not None)
    verdict = ACCEPTANCE.search(command) and ACCEPTANCE_VERDICT.search(output)
    ok = ok or (code == 1 and verdict is not None)
    return ok and "Traceback (most recent call last)" not in output


# The plan: which commands run where, each distinct one once, and the blocks run in parallel.
FRESH = re.compile(
    r"^distbench (allreduce|broadcast|reduce|allgather|reducescatter|alltoall|alltoallv|sendrecv"
    r"|sweep|pairs|overlap|rpc|ddp|pipeline|init)\b(?!.*--(out|resume)\b)(?!.* & )"
)
"""A fresh launch: it writes a new results/<UTC time>-<name> that no later command of its block
names, and reads nothing an earlier one wrote, so it runs the same in any block."""
READER = re.compile(r"^distbench (report|history|compare)\b(?!.*--save\b)")
"""A reader: it reads runs and baselines and writes only its own report, history folder and
cache, which no later command of the pages reads. Before the first writer of its block (a
launch, a --save, a baseline save, a night: any other command) it finds only the world, so it
runs the same in any block, and is not state for the commands after it."""


@dataclass
class Step:
    example: Example
    command: str = ""
    """As run: shrunk."""
    applied: list[str] = field(default_factory=list)
    key: tuple[str, ...] = ()
    """Equal keys run the same: the shrunk command, its `export`/`cd` lines and, unless it is a
    fresh launch or a reader before its block's first writer, the commands before it in its
    block (the state it runs in)."""
    execute: bool = False
    """Run in its block's world; else its key's outcome, run elsewhere, stands for it."""
    alone: bool = False
    """Keyed alone (a fresh launch, or a reader before any writer): no state for later steps."""


def plan(
    blocks: list[list[Example]], shrink: Callable[[str], tuple[str, list[str]]]
) -> list[list[Step]]:
    """Every block's steps. A key runs in the first block that has it. A command keyed with the
    commands before it also runs where a later command of its block runs, so that the later one
    finds the state the page says it finds."""
    seen: set[tuple[str, ...]] = set()
    planned: list[list[Step]] = []
    for group in blocks:
        steps: list[Step] = []
        before: tuple[str, ...] = ()
        written = False
        for example in group:
            if example.kind:
                steps.append(Step(example))
                continue
            command, applied = shrink(example.text)
            alone = bool(FRESH.match(command)) or (not written and bool(READER.match(command)))
            written = written or not READER.match(command)
            if alone:
                key: tuple[str, ...] = (*example.context, command)
            else:
                key = before = (*before, *example.context, command)
            steps.append(Step(example, command, applied, key, key not in seen, alone=alone))
            seen.add(key)
        needed = [n for n, s in enumerate(steps) if s.execute and not s.alone]
        for step in steps[: max(needed, default=0)]:
            step.execute = step.execute or (bool(step.key) and not step.alone)
        planned.append(steps)
    return planned


Outcome = tuple[str, list[str], int, str, float, float]
"""The command run, what shrank it, exit code, output, wall seconds, CPU seconds (its processes
and the in-process CLI's)."""


def run_block(job: tuple[Path, Path, list[Example], Callable[..., Any]]) -> list[Outcome]:
    """One block's commands to run, in order, in a fresh copy of the world `template` at `home`
    (in a pool worker: its own process, environment and working directory)."""
    template, home, examples, shrink = job
    shutil.copytree(template, home, symlinks=True)
    os.environ.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        OMP_NUM_THREADS="1",
    )
    for name in ("DISTBENCH_BASELINES", "GITHUB_STEP_SUMMARY", "SWEEP_ARGS", "DISTBENCH"):
        os.environ.pop(name, None)
    outcomes = []
    for example in examples:
        began, cpu = time.monotonic(), os.times()
        command, applied, code, output = run_example(example, home, shrink)
        used = os.times()
        spent = sum(used[:4]) - sum(cpu[:4])
        outcomes.append((command, applied, code, output, time.monotonic() - began, spent))
    return outcomes
