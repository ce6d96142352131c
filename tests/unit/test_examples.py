"""Every shell command of README.md, docs/*.md and `distbench ... --help` runs
(tests/doc_examples.py collects them): as written, or shrunk by a substitution of SHRINKS below,
or not at all when its page marks it gpu, cluster or long, and the mark is checked.

Each code block runs in a fresh copy of a prepared world (tests/doc_examples_run.py): a stand-in
clone at ~/distbench with the runs, baselines and files the examples name, the block's commands in
order, from the clone's root; those that name the clone as ~/distbench run from an empty
directory, as the nightly quick start says they may.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.doc_examples import (
    HELP_MARKERS,
    ROOT,
    Example,
    all_examples,
    indented_commands,
    marker_problem,
    page_examples,
    words,
)
from tests.doc_examples_run import (
    both_sides,
    invoke,
    passed,
    plan,
)

Shrink = tuple[str, str, Callable[[re.Match[str]], str]]
SHRINKS: list[Shrink] = [
    # (what, pattern, replacement): the declared substitutions. Each makes a command smaller
    # without changing what it runs; a command that any of them changed counts as shrunk.
    ("sizes up to 1M", r"--sizes (\S+)", lambda m: "--sizes " + small_sizes(m[1])),
    ("sizes up to 1M", r"--max-size (\S+)", lambda m: f"--max-size {small_sizes(m[1])}"),
    ("rpc sizes up to 64K", r"^(distbench rpc\b.*--sizes )(\S+)", lambda m: m[1] + rpc_sizes(m[2])),
    ("world sizes up to 4", r"--world-sizes (\S+)", lambda m: "--world-sizes " + ws(m[1])),
    ("2 trials", r"--trials (\d+)", lambda m: "--trials 2" if int(m[1]) > 2 else m[0]),
    ("2 steps", r"--steps (\d+)", lambda m: "--steps 2" if int(m[1]) > 2 else m[0]),
    ("2 steps", r"--window-steps \d+", lambda m: "--window-steps 1"),
    ("a smaller model", r"--(params|width|hidden|tokens) (\S+)", lambda m: smaller(m)),
    ("a smaller model", r"--batch-size \d+", lambda m: "--batch-size 32"),
    ("a smaller matmul", r"--compute (\S+)", lambda m: "--compute 64"),
    ("one value per --env", r"--env (\w+)=([^,\s]+),\S+", lambda m: f"--env {m[1]}={m[2]}"),
    ("the tiny matrix", r"--config ci/sweep-\S+", lambda m: "--config ~/tiny-sweep.toml"),
]
"""Substitutions on the command line. More in shrink(): a command that would measure the
default size ladder (to 64M on gloo) gets `--sizes 1K,1M` (the torchx component's default too),
a ladder with --factor stops at 4K (`--max-size`), ddp and pipeline without --steps get
`--steps 2`, ci/nightly.sh sweeps once, the tiny matrix (TINY_SWEEP), a compiled api compiles
one primitive at one size, and a command that launches once per world size (every workload but
the collectives and sweep, which measure several on subgroups of one launch) keeps one: the
largest up to 2 for pipeline and init (each rank a stage or a fresh process group; 3 ranks add
nothing the pages explain), up to 3 for the others."""

ONE_PER_WORLD_SIZE = "ddp|pipeline|init|rpc|overlap|pairs"
"""Workloads that launch once per world size (bench/workloads.py: no subgroups)."""
TWO_RANKS = ("pipeline", "init")
"""Of those, the ones that run with 2 ranks (pipeline: a stage each; init: a group of 2)."""
TORCHX_SWEEP = re.compile(r"^torchx run -s local_cwd \S*sweep\b")
"""The torchx component sweeps --sizes (default 1K,1M,64M: bench/torchx.py)."""
MEASURES_SIZES = re.compile(
    r"^distbench (allreduce|broadcast|reduce|allgather|reducescatter|alltoall|alltoallv|sendrecv"
    r"|sweep|pairs|overlap|rpc)\b"
)


def small_sizes(sizes: str) -> str:
    kept = [s for s in sizes.split(",") if to_bytes(s) <= 1 << 20]
    return ",".join(kept or ["1M"])


def rpc_sizes(sizes: str) -> str:
    """rpc's sizes up to 64K (its 1M costs ~20 CPU-s on gloo: each pattern moves it every iter)."""
    kept = [s for s in sizes.split(",") if to_bytes(s) <= 64 << 10]
    return ",".join(kept) if kept else sizes.split(",")[0]


def to_bytes(size: str) -> int:
    found = re.fullmatch(r"(\d+)([KMG]?)\w*", size)
    assert found, size
    return int(found[1]) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[found[2]]


def ws(sizes: str) -> str:
    return ",".join(dict.fromkeys(str(min(int(s), 4)) for s in sizes.split(",")))


def smaller(m: re.Match[str]) -> str:
    return f"--{m[1]} " + {"params": "100K", "width": "64", "hidden": "16", "tokens": "64"}[m[1]]


def shrink(command: str) -> tuple[str, list[str]]:
    """The command as the test runs it, and what shrank it (empty: it runs as written). Commands
    run together (`A & B`: two loopback nodes) shrink alike."""
    if " & " in command:
        parts = [shrink_one(part) for part in command.split(" & ")]
        return " & ".join(p for p, _ in parts), list(dict.fromkeys(w for _, a in parts for w in a))
    return shrink_one(command)


def shrink_one(command: str) -> tuple[str, list[str]]:
    applied: list[str] = []
    sized = re.search(r"--(sizes|min-size|max-size|tokens|config|resume)\b|\s-[bes]\s", command)
    torchx = TORCHX_SWEEP.match(command) and "--sizes" not in command  # (-s is its scheduler)
    if (MEASURES_SIZES.match(command) and not sized) or torchx:
        command, applied = command + " --sizes 1K,1M", ["sizes up to 1M"]
    ladder = re.search(r"--max-size (\S+)", command)
    if ladder and "--factor" in command and to_bytes(ladder[1]) > 4 << 10:
        low = re.search(r"--min-size (\S+)", command)
        if not low or to_bytes(low[1]) <= 4 << 10:  # a ladder of 4 B .. 4K: 11 sizes, not 19
            command = command.replace(ladder[0], "--max-size 4K")
            applied.append("a ladder up to 4K")
    if re.match(r"^distbench (ddp|pipeline)\b(?!.*--(steps|resume))", command):
        command, applied = command + " --steps 2", [*applied, "2 steps"]
    if re.search(r"ci/nightly\.sh(?!.*--(run-dir|resume))", command):
        command = re.sub(r"(ci/nightly\.sh)", r"\1 --launches 1", command)
        if "--config" not in command:
            command += " --config ci/sweep-nightly-cpu.toml"  # the default, shrunk below
        applied.append("one launch")
    if re.search(r"--api \S*compiled", command):  # each primitive and size compiles: one of each
        compiled = re.sub(r"--primitives (\w+)\S*", r"--primitives \1", command)
        compiled = re.sub(r"--sizes (\w+)\S*", r"--sizes \1", compiled)
        if compiled != command:
            command, applied = compiled, [*applied, "one primitive and size to compile"]
    own = re.match(rf"^distbench ({ONE_PER_WORLD_SIZE})\b.*--world-sizes (\S+)", command)
    if own:  # no subgroups: a launch per world size; the largest up to 3 (4 ranks on 2 cores
        # cost these workloads 25-100 s of CPU a command), up to 2 where 2 ranks run it
        most = 2 if own[1] in TWO_RANKS else 3
        largest = str(max(min(int(w), most) for w in own[2].split(",")))
        if largest != own[2]:
            command = command.replace(f"--world-sizes {own[2]}", f"--world-sizes {largest}")
            applied.append(f"one launch of up to {most} ranks")
    for what, pattern, replace in SHRINKS:
        new = re.sub(pattern, replace, command)
        if new != command:
            applied.append(what)
            command = new
    return command, list(dict.fromkeys(applied))


def test_every_marker_fits_its_command() -> None:
    """A marked command is what its marker says; a gpu-marked distbench command is refused here
    for want of a GPU (with --dry-run, so that nothing could launch)."""
    examples = all_examples()
    assert [p for p in map(marker_problem, examples) if p] == []
    if any(Path("/proc/driver/nvidia/gpus").glob("*")):
        return  # a GPU node: these commands would run
    for example in examples:
        argv = words(example.text)
        if example.kind == "gpu" and argv is not None:
            code, output = invoke([*argv[1:], "--dry-run"])
            assert code == 2 and re.search(r"GPU|CUDA", output), (example.text, output)


def test_a_marker_that_does_not_fit_fails(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- example: gpu -->\n```bash\ndistbench allreduce --backend gloo\n```\n")
    (wrong,) = page_examples(page, "page.md")
    assert wrong.kind == "gpu" and "is not gpu" in marker_problem(wrong)
    loop = "for r in 1 2; do distbench allreduce --out r-$r; done"
    page.write_text(f"<!-- example: long -->\n```bash\n{loop}\ndistbench report r-*\n```\n")
    assert [marker_problem(e) for e in page_examples(page, "page.md")] == ["", ""]
    page.write_text("<!-- example: long -->\n```bash\ndistbench report r-*\n```\n")
    (alone,) = page_examples(page, "page.md")  # no loop in its block: not part of a benchmark
    assert "is not long" in marker_problem(alone)
    page.write_text('<!-- example: long for "pip" -->\n```bash\ndistbench report RUN\n```\n')
    with pytest.raises(ValueError, match="names no command"):
        page_examples(page, "page.md")
    page.write_text("<!-- example: slow -->\n```bash\ndistbench report RUN\n```\n")
    with pytest.raises(ValueError, match="unknown example kind"):
        page_examples(page, "page.md")
    page.write_text("Text.\n\n    distbench report RUN\n")
    assert indented_commands(page) == ["distbench report RUN"]


def test_no_command_hides_where_the_collector_does_not_look() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert {p.name: indented_commands(p) for p in pages if indented_commands(p)} == {}
    helps = {e.text for e in all_examples() if "--help" in e.source}
    assert set(HELP_MARKERS) <= helps, "HELP_MARKERS names an example --help no longer shows"


def test_an_outlier_gate_example_has_ranks_to_flag() -> None:
    """`distbench pairs --primitive allreduce --fail-on-outlier`, billed as an acceptance test,
    ran at the default world size 2: one pair, whose two ranks stand alike, so nothing could ever
    be flagged and the gate always passed. Every such example names 3 ranks or more (or nodes)."""
    gates = [e for e in all_examples() if re.match(r"distbench pairs\b.*--fail-on-outlier", e.text)]
    assert gates
    for example in gates:
        sizes = re.search(r"--world-sizes (\S+)", example.text)
        nodes = re.search(r"--level node\b.*--nnodes (\d+)", example.text)
        units = int(nodes[1]) if nodes else max(int(w) for w in sizes[1].split(",")) if sizes else 2
        assert units >= 3, (example.source, example.text)


def test_shrinks_only_make_a_command_smaller() -> None:
    assert shrink("distbench allreduce --backend gloo --sizes 1M") == (
        "distbench allreduce --backend gloo --sizes 1M",
        [],
    )
    run, applied = shrink("distbench allreduce --sizes 1K,64M --trials 10 --world-sizes 2,8")
    assert run == "distbench allreduce --sizes 1K --trials 2 --world-sizes 2,4"
    assert applied == ["sizes up to 1M", "world sizes up to 4", "2 trials"]
    ladder = "distbench allreduce --world-sizes 2,3 --min-size 4 --max-size 1M --factor 2"
    assert shrink(ladder)[0] == ladder.replace("1M", "4K")
    assert shrink("distbench allreduce --min-size 8K --max-size 1M --factor 2")[1] == []
    assert shrink("distbench rpc --sizes 8,64K,1M")[0] == "distbench rpc --sizes 8,64K"
    assert shrink("distbench init --world-sizes 2,4,8")[0] == "distbench init --world-sizes 2"
    pairs = "distbench pairs --world-sizes 4 --sizes 1M"
    assert shrink(pairs)[0] == pairs.replace("4", "3")
    torchx = "torchx run -s local_cwd distbench.sweep --world_sizes 2"
    assert shrink(torchx)[0] == torchx + " --sizes 1K,1M"
    for example in all_examples():
        run, _ = shrink(example.text)
        assert "--dry-run" not in run
        for flag in ("sizes", "max-size", "world-sizes", "world_sizes", "trials", "steps"):
            before, after = (re.search(rf"--{flag} ([\w,]+)", c) for c in (example.text, run))
            if before and after:  # a list that only loses values, or one smaller value
                was, now = (list(map(to_bytes, m[1].split(","))) for m in (before, after))
                assert set(now) <= set(was) or (len(now) == 1 and now[0] <= min(was)), run
        if not example.kind:  # it runs: it writes inside its world, so it can run again
            assert not re.search(r"--(out|store) /", run), example


def test_a_reader_before_any_writer_runs_once() -> None:
    """report/history/compare without --save, before the first writer of their block, are keyed
    by their command alone (identical ones run once); after a writer, with their block's state."""
    readers = [Example("a.md", 0, "distbench report R"), Example("a.md", 0, "distbench history R")]
    again = [Example("b.md", 0, e.text) for e in readers]
    again.append(Example("b.md", 0, "distbench report S"))
    saved = [
        Example("c.md", 0, "distbench baseline save R --name n"),
        Example("c.md", 0, "distbench report R"),
    ]
    first, second, third = plan([readers, again, saved], shrink)
    assert [s.execute for s in first] == [True, True]
    assert [s.execute for s in second] == [False, False, True]  # no earlier reader forced to run
    assert [s.key for s in second[:2]] == [s.key for s in first]
    assert third[1].key == (saved[0].text, "distbench report R") and third[1].execute
    write = [Example("d.md", 0, "distbench compare n R --save v.md"), *readers]
    assert [s.execute for s in plan([readers, write], shrink)[1]] == [True, True, True]


def test_an_acceptance_exit_1_passes_only_with_node_0s_verdict() -> None:
    """Its exit 1 is a node failing the health check when node 0 printed the FAIL line; any other
    exit 1 of it (or a traceback) fails the example, and other commands' exit 1 still fails."""
    command = "distbench acceptance --backend gloo --quick --nnodes 2 --node-rank 0"
    verdict = "acceptance: node 1 (vm): FAIL: pairs\nacceptance: FAIL (1 of 2 nodes); verdict: a\n"
    assert passed(command, 1, verdict)
    assert not passed(command, 1, "acceptance: this node did not hold global rank 0\n")
    assert not passed(command, 3, verdict)
    assert not passed(command, 1, verdict + "Traceback (most recent call last):\n")
    assert not passed("distbench allreduce --sizes 1K", 1, verdict.replace("acceptance: ", "x"))
    assert not passed("distbench allreduce --sizes 1K", 1, verdict)  # another command's exit 1


def test_a_background_command_keeps_its_own_output_and_exit() -> None:
    """The line run for `A & B`: each side's output apart, headed by its exit code, the
    background's last; the background's failure is the line's exit code."""
    line = both_sides("echo from-a; exit 3", "echo from-b")
    assert line.index("--- in the foreground") < line.index("--- in the background")
    assert "$((f ? f : s))" in line and "> $d/bg 2>&1 &" in line
