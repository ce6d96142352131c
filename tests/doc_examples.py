"""The shell commands that the manual and `--help` show, and what tests/integration/test_examples.py
does with each: run it as written, run it shrunk (a declared substitution: smaller sizes, fewer
trials), or leave it to the marker its page gives it (gpu, cluster, long), which the test checks.

A marker is an HTML comment on the line(s) right above a code block, invisible on the site:

    <!-- example: gpu -->                  every command of the block
    <!-- example: long for "pip install" -->   only the commands that contain the quoted text

A block that runs a loop of launches is a benchmark: its other distbench commands (the launches
measured beside the loop, its report) may be marked long with it.

Help examples cannot carry a comment: HELP_MARKERS below marks them, checked the same way.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("gpu", "cluster", "long")
SHELL_LANGS = ("bash", "sh", "shell", "console", "")
MARKER = re.compile(r'^<!-- example: (\w+)(?: for "([^"]+)")? -->$')
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)
COMMAND_WORDS = re.compile(
    r"^(distbench|python|pip|pytest|bash|ci/|~/|srun|sbatch|torchx|mkdocs)\b"
)

HELP_MARKERS = {
    "distbench allreduce --backend nccl --sizes 1M,64M,1G --check": "gpu",
    "distbench allreduce --backend nccl --world-sizes 2,4,8 --dtype bfloat16 --check": "gpu",
    "distbench overlap --backend nccl --sizes 64M,256M --compute 8192 --mode both": "gpu",
    "distbench ddp --backend nccl --model transformer --width 512 --depth 6 --steps 50": "gpu",
    "distbench pairs --level node --nnodes 2 --nproc-per-node 8 --rdzv-endpoint HOST:29500": (
        "cluster"
    ),
    "distbench acceptance --nnodes 4 --node-rank 0 --rdzv-endpoint node01:29500 --budget 30": (
        "cluster"
    ),
    "distbench acceptance --backend nccl --reference expected.toml --reference-share 0.8": "gpu",
}
"""Examples of `distbench ... --help` that cannot run here, by kind (checked like page markers)."""

LOOP = re.compile(r"^for \w+ in .*\bdo\b.*\bdistbench\b")
"""A loop of launches: a benchmark. The other distbench commands of its block (the launches it
is measured beside, its report) are part of it, and may be marked long with it."""

CHECKS = {
    "cluster": re.compile(
        r"\b(srun|sbatch|sinfo|kubectl|envsubst|slurm-local\.sh)\b|torchx run -s (kubernetes|slurm)"
        r"|--rdzv-endpoint (?!127\.0\.0\.1|localhost)|\$(SKYPILOT|SLURM|PET)_\w+"
    ),
    "long": re.compile(
        r"\bpip install\b|\bmkdocs serve\b|\bpytest\b|\bmypy\b"  # installs, a server, the tests
        r"|ci/bench[_-]|ci/scale-smoke|ci/gpu[_-]"  # benchmarks and the hardware checks
        rf"|{LOOP.pattern}"  # a loop of launches: a benchmark
    ),
    "gpu": re.compile(r"--backend nccl|\bgpu-smoke\b|--gpus-per-node|--cuda-graph|symmetric"),
}
"""What a marked command must match: a marker on a command that could run here is refused."""


@dataclass
class Example:
    source: str
    """README.md, docs/PAGE.md or `distbench CMD --help`."""
    block: int
    """Blocks of one source run in order, each in a fresh world, its commands in order."""
    text: str
    kind: str = ""
    """A marker's kind, or '' for an example that is run."""
    context: list[str] = field(default_factory=list)
    """`export` and `cd` lines above it in its block, replayed before it."""
    benchmark: bool = False
    """Its block runs a loop of launches (LOOP)."""


def logical_lines(body: str) -> list[str]:
    """A block's commands: continuations joined, comments dropped, a loop or a `cmd &` pair one
    command."""
    out: list[str] = []
    pending = ""
    depth = 0
    for raw in re.sub(r"\s*\\\n\s*", " ", body).splitlines():
        line = re.sub(r"(^|\s+)#.*$", "", raw).strip()
        if not line:
            continue
        pending = f"{pending}; {line}" if depth else f"{pending} {line}".strip()
        words = re.findall(r"\b(do|done|then|fi)\b", line)
        depth += sum(w in ("do", "then") for w in words) - sum(w in ("done", "fi") for w in words)
        if depth == 0 and not pending.endswith("&"):
            out.append(pending.replace("do;", "do").replace("then;", "then"))
            pending = ""
    return out


def page_examples(path: Path, source: str) -> list[Example]:
    """Every command of the page's shell blocks, with the kind its markers give it."""
    text = path.read_text()
    examples: list[Example] = []
    for number, match in enumerate(FENCE.finditer(text)):
        if match.group(1) not in SHELL_LANGS:
            continue
        above = text[: match.start()].rstrip("\n").splitlines()
        markers: list[tuple[str, str]] = []
        while above and above[-1].startswith("<!--"):
            found = MARKER.match(above.pop().strip())
            if found:
                if found.group(1) not in KINDS:
                    raise ValueError(f"{source}: unknown example kind {found.group(1)!r}")
                markers.append((found.group(1), found.group(2) or ""))
        commands = logical_lines(match.group(2))
        benchmark = any(LOOP.search(c) for c in commands)
        for _, part in markers:
            if part and not any(part in c for c in commands):
                raise ValueError(f'{source}: marker for "{part}" names no command of its block')
        context: list[str] = []
        for command in commands:
            if command.startswith(("export ", "cd ")):
                context.append(command)
                continue
            named = [k for k, part in markers if part and part in command]
            whole = [k for k, part in markers if not part]
            kind = (named or whole or [""])[0]
            examples.append(Example(source, number, command, kind, list(context), benchmark))
    return examples


def indented_commands(path: Path) -> list[str]:
    """Commands in indented (not fenced) code blocks, which the collector does not read."""
    lines = path.read_text().splitlines()
    return [
        b.strip()
        for a, b in zip(["", *lines], lines, strict=False)
        if not a.strip() and b.startswith("    ") and COMMAND_WORDS.match(b.strip())
    ]


def help_examples() -> list[Example]:
    """The examples of `distbench --help` and of every command's --help."""

    from distbench.cli.app import command as built_cli

    found: list[Example] = []

    def walk(command: object, path: str) -> None:
        text = getattr(command, "help", None) or ""
        lines = text.split("Examples:", 1)[-1] if "Examples:" in text else text
        if "Examples:" in text or path == "distbench":
            for n, line in enumerate(re.findall(r"^\s+(distbench .*)$", lines, re.M)):
                cmd = re.split(r"\s{2,}|\s+#", line.strip())[0]
                found.append(Example(f"`{path} --help`", n, cmd, HELP_MARKERS.get(cmd, "")))
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk(sub, f"{path} {name}")

    walk(built_cli(), "distbench")
    return found


def all_examples() -> list[Example]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found: list[Example] = []
    for page in pages:
        found += page_examples(page, page.relative_to(ROOT).as_posix())
    return found + help_examples()


def reference_file() -> str:
    """The `expected.toml` the examples name (`--reference expected.toml`): the first toml block
    of docs/reference-values.md, the file as that page shows it."""
    page = (ROOT / "docs" / "reference-values.md").read_text()
    return page.split("```toml\n", 1)[1].split("```", 1)[0]


def marker_problem(example: Example) -> str:
    """Why the example's marker does not fit it ('' when it does). gpu markers on distbench
    commands are also checked by running them (test_examples.py: refused for want of a GPU)."""
    part_of_benchmark = example.benchmark and example.text.startswith("distbench ")
    if example.kind == "long" and part_of_benchmark:
        return ""
    if example.kind and not CHECKS[example.kind].search(example.text):
        return (
            f"{example.source}: marked {example.kind}, but '{example.text}' is not {example.kind}"
        )
    return ""


def words(command: str) -> list[str] | None:
    """The argv of a plain command, or None when it needs a shell ($, ~, globs, pipes, loops)."""
    if re.search(r"[$~|&;<>`*]|^\w+=|^for |^(?!distbench )", command):
        return None
    return shlex.split(command)
