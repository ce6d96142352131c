"""Every shell command of README.md, docs/*.md and `distbench ... --help` runs, as written or
shrunk, or is marked. The half that launches; the collector, the shrinks, the markers' checks and
the file's whole story: tests/unit/test_examples.py."""

from __future__ import annotations

import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.doc_examples import (
    Example,
    all_examples,
)
from tests.doc_examples_run import (
    Outcome,
    build_world,
    passed,
    plan,
    run_block,
    run_example,
)
from tests.unit.test_examples import (
    shrink,
)

TINY_SWEEP = """# The nightly matrix, shrunk: two primitives, one size, 2 trials.
backends = ["gloo"]
world_sizes = [2]
primitives = ["allreduce", "broadcast"]
sizes = ["1K"]
iters = 2
warmup = 1
trials = 2
order = "interleaved"
check = true
"""


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("world") / "home"
    build_world(home, TINY_SWEEP)
    return home


@pytest.fixture
def world_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[Path], None]:
    def enter(home: Path) -> None:
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
        monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")
        monkeypatch.setenv("OMP_NUM_THREADS", "1")
        for name in ("DISTBENCH_BASELINES", "GITHUB_STEP_SUMMARY", "SWEEP_ARGS", "DISTBENCH"):
            monkeypatch.delenv(name, raising=False)

    return enter


def blocks(examples: list[Example]) -> dict[tuple[str, int], list[Example]]:
    grouped: dict[tuple[str, int], list[Example]] = {}
    for example in examples:
        grouped.setdefault((example.source, example.block), []).append(example)
    return grouped


@pytest.mark.slow
def test_every_example_runs_or_is_marked(
    template: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each block in a fresh world, its commands in order; a command whose run would repeat one
    run already (the same shrunk command: after the same commands of its block, or anywhere when
    it is a fresh launch) runs once and counts for each. Blocks run $DISTBENCH_EXAMPLES_JOBS at a
    time (default 2, CI's cores), each in its own process. Prints the counts per source and kind,
    and the time."""
    examples = all_examples()
    only = os.environ.get("DISTBENCH_EXAMPLES")  # a regex: run the examples it finds (by hand)
    if only:
        examples = [e for e in examples if re.search(only, f"{e.source} {e.text}")]
    planned = plan(list(blocks(examples).values()), shrink)
    jobs = [
        (template, tmp_path / f"w{n}" / "home", [s.example for s in steps if s.execute], shrink)
        for n, steps in enumerate(planned)
        if any(s.execute for s in steps)
    ]
    order = sorted(range(len(jobs)), key=lambda n: -cost(jobs[n][2]))  # the longest first
    start, cpu = time.monotonic(), os.times()
    ran: dict[int, list[Outcome]] = {}
    streams = int(os.environ.get("DISTBENCH_EXAMPLES_JOBS", "2"))
    with multiprocessing.get_context("spawn").Pool(streams) as pool:
        results = pool.imap_unordered(numbered_block, [(n, jobs[n]) for n in order])
        for n, outcomes in results:
            ran[n] = outcomes
            for command, _, code, _, took, spent in outcomes:
                log(f"{took:6.1f}s {spent:6.1f}s CPU exit {code} {command}")
    took, used = time.monotonic() - start, os.times()
    outcome: dict[tuple[str, ...], Outcome] = {}
    failures: list[str] = []
    executed = [s for steps in planned for s in steps if s.execute]
    for step, result in zip(executed, [o for n in sorted(ran) for o in ran[n]], strict=True):
        outcome.setdefault(step.key, result)
        command, _, code, output, _, _ = result
        if not passed(command, code, output):
            failures.append(f"{step.example.source}: {command}\n  exit {code}: {output[-4000:]}")
    counts: Counter[tuple[str, str]] = Counter()
    for step in (s for steps in planned for s in steps):
        source = step.example.source
        where = "README" if source == "README.md" else "--help" if "--help" in source else "docs"
        kind = step.example.kind or ("shrunk" if outcome[step.key][1] else "verbatim")
        counts[(where, kind)] += 1
    children = used.children_user + used.children_system - cpu.children_user - cpu.children_system
    own = used.user + used.system - cpu.user - cpu.system
    with capsys.disabled():
        print(f"\nexamples: {len(examples)}, {len(outcome)} commands run in {took:.0f} s")
        print(f"  ({len(executed)} runs in {len(jobs)} blocks, {streams} at a time)")
        print(f"  (CPU: {own:.0f} s in this process, {children:.0f} s in its children)")
        for where in ("README", "docs", "--help"):
            kinds = ("verbatim", "shrunk", "gpu", "cluster", "long")
            print(f"  {where:7} " + ", ".join(f"{k} {counts[(where, k)]}" for k in kinds))
    assert not failures, "\n".join(dict.fromkeys(failures))


def numbered_block(job: tuple[int, tuple[Any, ...]]) -> tuple[int, list[Outcome]]:
    return job[0], run_block(job[1])


def cost(examples: list[Example]) -> int:
    """A rough weight for ordering the blocks: a night is several launches and a report."""
    return sum(5 if "nightly.sh" in e.text else 2 if "distbench" in e.text else 1 for e in examples)


def log(line: str) -> None:
    """One line per command run, to $DISTBENCH_EXAMPLES_LOG when set (watching a long run)."""
    if os.environ.get("DISTBENCH_EXAMPLES_LOG"):
        with open(os.environ["DISTBENCH_EXAMPLES_LOG"], "a") as handle:
            handle.write(line + "\n")


def test_a_documented_command_that_breaks_fails(
    template: Path,
    world_env: Callable[[Path], None],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mutations: the README's first command fails the test when distbench stops accepting it
    (its --sizes parser broken from the test side), and when its page mistypes it."""
    from distbench.options import shared as shared_options
    from distbench.parse import UsageError

    home = tmp_path / "home"
    shutil.copytree(template, home, symlinks=True)
    world_env(home)
    (first,) = [e for e in all_examples() if e.source == "README.md" and "gloo" in e.text][:1]
    mistyped = Example(first.source, first.block, first.text.replace("--sizes", "--size"))
    assert not passed(*pick(run_example(mistyped, home, shrink)))

    def refuse(text: str) -> list[int]:
        raise UsageError(f"sizes no longer parse: {text}")

    monkeypatch.setattr(shared_options, "parse_sizes", refuse)
    command, _, code, output = run_example(first, home, shrink)
    assert code == 2 and "no longer parse" in output
    assert not passed(command, code, output)


def pick(result: tuple[str, list[str], int, str]) -> tuple[str, int, str]:
    return result[0], result[2], result[3]


def test_both_sides_of_a_background_example_are_kept_apart() -> None:
    """`A & B` as the examples run it (bash): each side's output under its own exit code, the
    background's last, and either side's failure fails the line."""
    from tests.doc_examples_run import both_sides

    for background, foreground, code in (("exit 3", "true", 3), ("true", "exit 5", 5)):
        line = both_sides(f"echo from-a; {background}", f"echo from-b; {foreground}")
        done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, check=False)
        assert done.returncode == code, done
        fg, bg = done.stdout.split("--- in the background: exit ")
        assert fg.startswith("--- in the foreground: exit ") and "from-b" in fg and "from-a" in bg
        assert bg.startswith(str(3 if code == 3 else 0))
