"""The manual: the column reference is generated from the schema with one definition per column,
the front page's links resolve, and the README's set-up block is what .ci/run runs."""

from __future__ import annotations

import importlib.util
import re
import sys
from dataclasses import fields
from types import ModuleType

import pytest

from distbench.collectors.ranks import RankRow
from distbench.collectors.rows_init import InitRow
from distbench.collectors.rows_overlap import OverlapRow
from distbench.collectors.rows_pipeline import PipelineRow
from distbench.collectors.schema import DdpRow, ResultRow, SampleRow
from tests.paths import ROOT

ROW_TYPES = (ResultRow, DdpRow, SampleRow, PipelineRow, InitRow, OverlapRow, RankRow)
"""Every file's row class: the reference has a table for each (docs/hooks/columns.py)."""

PENDING_DOCSTRINGS: frozenset[str] = frozenset()
"""Columns whose field in collectors/schema.py has no docstring in any row class yet: none since
2026-12-05. Nothing may be added to this list."""


def load_hook(name: str) -> ModuleType:
    """A module of docs/hooks/ (not a package: mkdocs loads them by path, and so does this)."""
    module_name = f"docs_hook_{name}"
    spec = importlib.util.spec_from_file_location(module_name, ROOT / "docs/hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


columns = load_hook("columns")
readme = load_hook("readme")
DEFINITION = re.compile(r"^\| `(\w+)`\{#column-(\w+)\} \| `([^`]+)` \| (.*) \|$", re.MULTILINE)


def generated() -> str:
    return str(columns.render_reference(columns.read_columns(columns.SCHEMA_SOURCE.read_text())))


def test_the_reader_sees_every_field_with_its_type() -> None:
    read = columns.read_columns(columns.SCHEMA_SOURCE.read_text())
    for row_type in ROW_TYPES:
        found = [(c.name, c.type) for c in read[row_type.__name__]]
        assert found == [(f.name, f.type) for f in fields(row_type)]


def test_the_reader_takes_the_string_under_a_field_as_its_docstring() -> None:
    source = '''
class ResultRow:
    """The class's own docstring is not a column's."""

    size_bytes: int
    """Bytes,
        measured."""
    wrong: int
    x = 1
class DdpRow:
    pass
class SampleRow:
    pass
'''
    read = columns.read_columns(source)
    assert [(c.name, c.type, c.doc) for c in read["ResultRow"]] == [
        ("size_bytes", "int", "Bytes,\nmeasured."),
        ("wrong", "int", ""),
    ]
    assert read["DdpRow"] == [] and read["SampleRow"] == []


def test_every_column_is_defined_exactly_once() -> None:
    names = [m.group(1) for m in DEFINITION.finditer(generated())]
    every = {f.name for row_type in ROW_TYPES for f in fields(row_type)}
    assert sorted(names) == sorted(every)
    for match in DEFINITION.finditer(generated()):
        assert match.group(1) == match.group(2)


def test_every_column_has_a_description() -> None:
    empty = {m.group(1) for m in DEFINITION.finditer(generated()) if not m.group(4).strip()}
    new = empty - PENDING_DOCSTRINGS
    assert not new, f"add a docstring under these fields in collectors/schema.py: {sorted(new)}"


def test_a_shared_column_links_back_to_its_one_definition() -> None:
    text = generated()
    ddp_table = text[text.index("(`DdpRow`)") : text.index("(`SampleRow`)")]
    assert "[`run_id`](#column-run_id)" in ddp_table
    assert "{#column-run_id}" not in ddp_table
    assert "{#column-strategy}" in ddp_table


def test_the_schema_page_gets_the_tables_in_place_of_the_placeholder() -> None:
    page = (ROOT / "docs/schema.md").read_text()
    out = columns.render_page(page, columns.SCHEMA_SOURCE.read_text())
    assert out.count(columns.PLACEHOLDER) == out.count(columns.END) == 1
    assert generated().strip() in out
    assert columns.render_page(out, columns.SCHEMA_SOURCE.read_text()) == out  # idempotent
    assert "{#column-size_bytes}" in out
    with pytest.raises(ValueError, match="exactly once"):
        columns.render_page("# no placeholder", columns.SCHEMA_SOURCE.read_text())


def test_the_generated_pages_are_current_in_the_repository() -> None:
    """docs/schema.md's column tables and docs/upgrading.md's changes per version are written
    into the pages, so they read whole in a clone or on GitHub (a new user found schema.md's
    reference empty there): the copies must be what the hooks generate now."""
    page = (ROOT / "docs/schema.md").read_text()
    assert columns.render_page(page, columns.SCHEMA_SOURCE.read_text()) == page, (
        "docs/schema.md is stale: run python docs/hooks/columns.py --write"
    )
    migrations = load_hook("migrations")
    upgrading = (ROOT / "docs/upgrading.md").read_text()
    assert migrations.render_page(upgrading) == upgrading, (
        "docs/upgrading.md is stale: run python docs/hooks/migrations.py --write"
    )


def test_the_front_page_links_resolve_on_github_and_on_the_site() -> None:
    text = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\((?!https?://)([^)#]+)", text)
    assert targets, "the README links to the manual"
    for target in targets:
        assert target.startswith("docs/"), f"README links outside docs/: {target}"
        assert (ROOT / target).is_file(), target
    site = readme.render_front_page(text)
    for target in re.findall(r"\]\((?!https?://)([^)#]+)", site):
        assert (ROOT / "docs" / target).is_file(), target


def test_the_report_picture_is_small() -> None:
    for picture in (ROOT / "docs/img").glob("*.png"):
        assert picture.stat().st_size < 300_000, picture


README_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
"""PyTorch's own instruction for its CPU build on Linux (pytorch.org, Get Started: pip, CPU),
torch alone: the README's first set-up command."""
CI_TORCH = "pip install torch==2.13.0"
"""CI's own step in its place: that index is out of reach from CI, whose machine has the wheel."""
README_SETUP = ("<!-- .ci/run runs these commands verbatim", "<!-- end of the set-up block -->")
CI_SETUP = ("# --- the README's set-up commands, verbatim", "# --- end of README set-up ---")


def commands_between(text: str, start: str, end: str, fenced: bool) -> list[str]:
    """The command lines between two marker lines (inside code fences only, when `fenced`),
    comments and blank lines dropped."""
    block = text[text.index(start) : text.index(end)].split("\n", 1)[1]
    if fenced:
        block = "\n".join(re.findall(r"^```\w*\n(.*?)^```", block, re.M | re.S))
    lines = (re.sub(r"\s+#.*$", "", line).strip() for line in block.splitlines())
    return [line for line in lines if line and not line.startswith(("#", "```"))]


def setup_commands(readme: str, ci: str) -> tuple[list[str], list[str]]:
    return commands_between(readme, *README_SETUP, fenced=True), commands_between(
        ci, *CI_SETUP, fenced=False
    )


def setup_problems(readme: str, ci: str) -> list[str]:
    """What breaks the contract: .ci/run runs the README's set-up commands verbatim, in order,
    but the torch line, which it replaces by its own named local step; the test suite (pytest)
    runs at the end of .ci/run. The README's torch line is PyTorch's own CPU-wheel instruction and
    comes before every other install command of the README."""
    readme_setup, ci_setup = setup_commands(readme, ci)
    problems = []
    if not readme_setup or readme_setup[0] != README_TORCH:
        problems.append(f"the README's set-up must start with '{README_TORCH}'")
    first_install = re.search(r"^pip install.*$", readme, re.M)
    if first_install is None or not first_install[0].startswith(README_TORCH):
        problems.append("an install command comes before the README's CPU-torch step")
    tests = [c for c in readme_setup if c.split()[0] == "pytest"]
    expected = [CI_TORCH if c == README_TORCH else c for c in readme_setup if c not in tests]
    if ci_setup != expected:
        problems.append(f".ci/run's set-up is {ci_setup}, the README's asks for {expected}")
    ci_lines = [line.strip() for line in ci.splitlines()]
    if CI_TORCH in ci_lines:
        named = ci_lines[ci_lines.index(CI_TORCH) - 2 : ci_lines.index(CI_TORCH)]
        if not any("CI's own step" in line and README_TORCH in line for line in named):
            problems.append(f".ci/run must name '{CI_TORCH}' as CI's own step for the README's")
    ci_commands = [line.split("#")[0].strip() for line in ci_lines]
    ci_commands += [c.removeprefix("coverage run -m ") for c in ci_commands]  # measured, same run
    problems += [f".ci/run does not run the README's '{c}'" for c in tests if c not in ci_commands]
    return problems


def test_the_readme_set_up_block_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci/run").read_text()
    assert setup_problems(readme, ci) == []
    readme_setup, _ = setup_commands(readme, ci)
    assert "pip install -e ." in readme_setup and 'pip install -e ".[dev]"' in readme_setup


def test_the_set_up_contract_catches_a_drift() -> None:
    """Each way the README and .ci/run can drift apart is named (mutations of the real files)."""
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci/run").read_text()
    broken = {
        "CUDA torch in the README": readme.replace(README_TORCH, "pip install torch", 1),
        "torch after distbench": readme.replace(
            "\n" + README_TORCH + " ", "\npip install -e .\n" + README_TORCH + " ", 1
        ),
    }
    for name, text in broken.items():
        assert setup_problems(text, ci), name
    unnamed = ci.replace("CI's own step", "a step")
    assert setup_problems(readme, unnamed), "CI's torch step not named"
    light_dropped = ci.replace("pip install -e .\n", "", 1)
    assert setup_problems(readme, light_dropped), "the light install not run by CI"
    other_tests = ci.replace("\npytest --durations=25 tests/integration", "\npytest", 1)
    assert setup_problems(readme, other_tests), "another integration command in CI"
    other_tests = ci.replace("\ncoverage run -m pytest tests/unit", "\npytest tests", 1)
    assert other_tests != ci and setup_problems(readme, other_tests), "another test command in CI"
    index_in_ci = ci.replace(CI_TORCH + "\n", README_TORCH + "\n", 1)
    assert setup_problems(readme, index_in_ci), "CI ran the unreachable index"


def test_the_front_page_lists_every_command() -> None:
    """README's command table names every command `distbench --help` lists, and links it."""

    from distbench.cli.app import command as built_cli

    commands = sorted(built_cli().commands)  # type: ignore[attr-defined]
    text = (ROOT / "README.md").read_text()
    table = text[text.index("| command | what it does |") : text.index("## Documentation")]
    missing = [
        name for name in commands if f"`distbench {name}" not in table and f"`{name}`" not in table
    ]
    assert not missing, f"add these commands to README.md's command table: {missing}"


@pytest.mark.parametrize(
    ("page", "config"),
    [("commands.md", "sweep-example.toml"), ("compare.md", "thresholds-example.toml")],
)
def test_a_shipped_config_shown_in_the_docs_is_the_file(page: str, config: str) -> None:
    """The manual shows ci/sweep-example.toml and ci/thresholds-example.toml whole (comments
    and blank lines out); its copies had drifted (7 primitives of 9, a rule the file lacks)."""
    text = (ROOT / "docs" / page).read_text()
    blocks = re.findall(r"```toml\n(.*?)```", text, re.DOTALL)
    lines = [
        line for line in (ROOT / "ci" / config).read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]  # fmt: skip
    assert "\n".join(lines) + "\n" in blocks, f"docs/{page} shows ci/{config} other than it is"
