"""The house's import rules, read from the source (ast: every import, those inside functions and
under TYPE_CHECKING too), never by importing it:

- the CLI is the roof: no module outside bench/cli/ imports distbench.cli (bench/__main__.py,
  `python -m distbench`, aside);
- no cycle between packages. A package is a directory (bench/comm/, reports/compare/ ...); the
  modules directly in bench/ (parse, spec, timing ... workloads, worker) are each a node of their
  own, as the root holds the shared base and the registry side by side.

A failure names the import (file:line) or the cycle's path, one import per step.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.paths import ROOT as REPO

ROOTS = {"bench": "distbench", "collectors": "distbench.collectors", "reports": "distbench.reports"}
"""Source folder -> the import name setuptools' package-dir gives it."""
CLI = "distbench.cli"
CLI_EXEMPT = {"distbench.__main__"}
"""`python -m distbench` is the command itself."""

KNOWN_CYCLES: dict[frozenset[str], str] = {}
"""Cycles left to their owners' work, each with why; a fixed one must leave this list."""


@dataclass(frozen=True)
class Import:
    importer: str
    """The importing module's dotted name."""
    target: str
    """The imported module (a name imported from a module counts as that module)."""
    where: str
    """file:line."""


def source_modules(repo: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py under the source roots."""
    found = {}
    for folder, name in ROOTS.items():
        base = repo / folder
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((name, *parts))] = path
    return found


def imported_names(path: Path, module: str) -> Iterator[tuple[str, int]]:
    """(dotted name, line) of every import in the file, relative ones made absolute; for `from A
    import b` the name `A.b` (b may be a module or a name in A)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([source] if source else [])])
            for alias in node.names:
                yield f"{source}.{alias.name}", node.lineno


def walk_imports(repo: Path) -> list[Import]:
    """Every import between the source's own modules."""
    modules = source_modules(repo)
    found = []
    for module, path in modules.items():
        for name, line in imported_names(path, module):
            target = name
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target:
                where = f"{path.relative_to(repo)}:{line}"
                found.append(Import(module, target, where))
    return found


def node_of(module: str, modules: dict[str, Path]) -> str:
    """The module's package (its directory), or the module itself directly in bench/."""
    package = module if modules[module].name == "__init__.py" else module.rpartition(".")[0]
    return module if package == "distbench" else package


def cli_imports(imports: list[Import]) -> list[Import]:
    """Imports of distbench.cli from outside it."""
    inside = (CLI, *CLI_EXEMPT)
    return [
        imp
        for imp in imports
        if (imp.target == CLI or imp.target.startswith(CLI + "."))
        and not any(imp.importer == name or imp.importer.startswith(CLI + ".") for name in inside)
    ]


def package_graph(repo: Path) -> dict[str, dict[str, Import]]:
    """Node -> the nodes it imports, each with its first import (for the message)."""
    modules = source_modules(repo)
    graph: dict[str, dict[str, Import]] = {}
    for imp in walk_imports(repo):
        a, b = node_of(imp.importer, modules), node_of(imp.target, modules)
        if a != b:
            graph.setdefault(a, {}).setdefault(b, imp)
        graph.setdefault(b, {})
    return graph


def strongly_connected(graph: dict[str, dict[str, Import]]) -> list[set[str]]:
    """Tarjan's components of more than one node: each holds at least one cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def cycle_path(graph: dict[str, dict[str, Import]], component: set[str]) -> list[Import]:
    """A shortest cycle through the component's first node, an import per step."""
    start = min(component)
    came_from: dict[str, tuple[str, Import]] = {}
    frontier = [start]
    while frontier:  # breadth first inside the component, until an import leads back to start
        node = frontier.pop(0)
        for other, imp in sorted(graph[node].items()):
            if other == start:
                path = [imp]
                while node != start:
                    node, step = came_from[node]
                    path.append(step)
                return path[::-1]
            if other in component and other not in came_from:
                came_from[other] = (node, imp)
                frontier.append(other)
    raise AssertionError(f"no cycle through {start}")


def cycles(repo: Path) -> dict[frozenset[str], str]:
    """Each cycle's nodes -> its path as one line: node -(file:line)-> node ..."""
    graph = package_graph(repo)
    modules = source_modules(repo)
    found = {}
    for component in strongly_connected(graph):
        path = cycle_path(graph, component)
        steps = [node_of(path[0].importer, modules)]
        for imp in path:
            steps.append(f"-({imp.where} imports {imp.target})-> {node_of(imp.target, modules)}")
        found[frozenset(component)] = " ".join(steps)
    return found


def test_no_module_outside_cli_imports_it() -> None:
    bad = cli_imports(walk_imports(REPO))
    assert not bad, "distbench.cli is the roof; imported from below by:\n" + "\n".join(
        f"  {imp.where}: {imp.target}" for imp in bad
    )


def test_no_cycle_between_packages() -> None:
    found = cycles(REPO)
    new = {nodes: path for nodes, path in found.items() if nodes not in KNOWN_CYCLES}
    assert not new, "cycles between packages:\n" + "\n".join(f"  {p}" for p in new.values())
    fixed = set(KNOWN_CYCLES) - set(found)
    assert not fixed, f"fixed, so leave KNOWN_CYCLES: {[sorted(nodes) for nodes in fixed]}"


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_walker_names_a_cli_import_and_a_cycle(tmp_path: Path) -> None:
    """The rules proven by breaking them: a tiny tree with an import of the CLI from a workload
    (inside a function), an allowed one (__main__), and a cycle of three packages, one of its
    imports relative and one under TYPE_CHECKING."""
    for folder in ("bench", "bench/cli", "bench/a", "bench/b", "bench/c", "collectors", "reports"):
        write(tmp_path, f"{folder}/__init__.py", "")
    write(tmp_path, "bench/__main__.py", "from distbench.cli import main\n")
    write(tmp_path, "bench/cli/app.py", "from distbench.a import x\n")
    write(tmp_path, "bench/a/x.py", "def run():\n    from distbench.cli.app import main\n")
    write(tmp_path, "bench/b/y.py", "from ..c import z\n")
    write(
        tmp_path,
        "bench/c/z.py",
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from distbench.collectors import w\n",
    )
    write(tmp_path, "collectors/w.py", "import distbench.b.y\n")

    bad = cli_imports(walk_imports(tmp_path))
    assert [(imp.where, imp.target) for imp in bad] == [("bench/a/x.py:2", "distbench.cli.app")]

    found = cycles(tmp_path)
    three = frozenset({"distbench.b", "distbench.c", "distbench.collectors"})
    roof = frozenset({"distbench.a", "distbench.cli"})  # the CLI's import from below closes one
    assert set(found) == {three, roof}
    assert found[roof] == (
        "distbench.a -(bench/a/x.py:2 imports distbench.cli.app)-> distbench.cli "
        "-(bench/cli/app.py:1 imports distbench.a.x)-> distbench.a"
    )
    assert found[three] == (
        "distbench.b -(bench/b/y.py:1 imports distbench.c.z)-> distbench.c "
        "-(bench/c/z.py:3 imports distbench.collectors.w)-> distbench.collectors "
        "-(collectors/w.py:1 imports distbench.b.y)-> distbench.b"
    )

    write(tmp_path, "collectors/w.py", "")  # the cycle's last import gone: that cycle goes
    assert set(cycles(tmp_path)) == {roof}


WORKLOAD_FILES = ("args.py", "spec.py", "runner.py", "rows.py", "table.py")
"""Every workload folder's files: its options, spec.json's dataclass, the rank side, its rows and
its terminal table (docs/contributing.md, "Adding a workload")."""


def test_every_workload_folder_has_the_same_files() -> None:
    from distbench.workloads import WORKLOADS

    missing = {
        kind: [name for name in WORKLOAD_FILES if not (REPO / "bench" / kind / name).is_file()]
        for kind in WORKLOADS
    }
    assert not any(missing.values()), f"workload folders lacking files: {missing}"
