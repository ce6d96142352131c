"""mkdocs hook: the column reference in docs/schema.md, generated from collectors/.

    python docs/hooks/columns.py            # print the generated Markdown
    python docs/hooks/columns.py --write    # write it into docs/schema.md (tests check it is)

The tables are written into docs/schema.md between PLACEHOLDER and END, so that the page reads
whole where Markdown is read without the site (a clone, GitHub); the hook writes them afresh
into every build, and tests/unit/test_docs.py fails when the page's copy is stale.

Each row dataclass in ROW_FILES (results.csv of every command, samples.csv, ranks.csv) gives
one table: every column in file order, with its type and the docstring under its field. A column
that several files share is defined once, in the first table that has it; later tables link back
to that definition. The source is read with `ast`, so building the docs imports neither torch nor
distbench.
"""

from __future__ import annotations

import ast
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA_SOURCE = Path(__file__).resolve().parents[2] / "collectors" / "schema.py"
PLACEHOLDER = "<!-- columns -->"
"""Where docs/schema.md's generated tables begin ..."""
END = "<!-- /columns -->"
"""... and end."""
PAGE = Path(__file__).resolve().parents[1] / "schema.md"

ROW_FILES = (
    ("ResultRow", "results.csv: communication rows"),
    ("DdpRow", "results.csv of `distbench ddp`"),
    ("SampleRow", "samples.csv"),
    ("PipelineRow", "results.csv of `distbench pipeline`"),
    ("InitRow", "results.csv of `distbench init`"),
    ("OverlapRow", "results.csv of `distbench overlap`"),
    ("RankRow", "ranks.csv of `distbench pairs`"),
)
"""The row dataclasses, in the order the page shows them, and the file each one is a row of."""

ROW_MODULES = {
    "PipelineRow": "rows_pipeline.py",
    "InitRow": "rows_init.py",
    "OverlapRow": "rows_overlap.py",
    "RankRow": "ranks.py",
}
"""Row classes defined outside collectors/schema.py, and their module in collectors/."""


@dataclass(frozen=True)
class Column:
    """One field of a row dataclass."""

    name: str
    type: str
    """The annotation as written, e.g. `int`."""
    doc: str
    """The string literal under the field, dedented; empty when there is none."""


def read_columns(source: str) -> dict[str, list[Column]]:
    """The fields of each class in ROW_FILES, in declaration order, from the schema's source."""
    wanted = {name for name, _ in ROW_FILES}
    found = {name: cols for name, cols in class_columns(source).items() if name in wanted}
    for name, module in ROW_MODULES.items():
        if name not in found:
            found[name] = class_columns((SCHEMA_SOURCE.parent / module).read_text())[name]
    missing = wanted - found.keys()
    if missing:
        raise ValueError(f"{SCHEMA_SOURCE}: no class {', '.join(sorted(missing))}")
    return found


def class_columns(source: str) -> dict[str, list[Column]]:
    """Every class's fields, its bases' first: a base class of the source, or one imported from
    distbench.collectors.X, read from collectors/X.py (DdpRow extends TrainingRow)."""
    tree = ast.parse(source)
    imported = {
        alias.name: SCHEMA_SOURCE.parent / f"{node.module.rsplit('.', 1)[1]}.py"
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module
        if node.module.startswith("distbench.collectors.")
        for alias in node.names
    }
    found: dict[str, list[Column]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        columns = []
        for base in (b.id for b in node.bases if isinstance(b, ast.Name)):
            if base in found:
                columns += found[base]
            elif base in imported:
                columns += class_columns(imported[base].read_text()).get(base, [])
        for stmt, after in zip(node.body, [*node.body[1:], None], strict=True):
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            doc = ""
            if (
                isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                doc = inspect.cleandoc(after.value.value)
            columns.append(Column(stmt.target.id, ast.unparse(stmt.annotation), doc))
        found[node.name] = columns
    return found


def anchor(name: str) -> str:
    """The id of a column's definition on the schema page."""
    return f"column-{name}"


def _cell(text: str) -> str:
    """Text for one Markdown table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


@dataclass(frozen=True)
class Definition:
    """The one definition of a column name, merged over every file that has it."""

    name: str
    home: str
    """The first class (in ROW_FILES order) that has the column: its table defines it."""
    type: str
    meaning: str
    """The home class's docstring, then each other class's own docstring where it says more."""


def define_columns(columns: dict[str, list[Column]]) -> dict[str, Definition]:
    """One definition per column name, in the order the tables first show them."""
    seen: dict[str, list[tuple[str, Column]]] = {}
    for class_name, _ in ROW_FILES:
        for column in columns[class_name]:
            seen.setdefault(column.name, []).append((class_name, column))
    definitions = {}
    for name, found in seen.items():
        home, first = found[0]
        types = [first.type]
        types += [f"{c.type} in {k}" for k, c in found[1:] if c.type != first.type]
        docs = [first.doc] if first.doc else []
        said = {first.doc}  # an inherited column (TrainingRow's in DdpRow, PipelineRow): once
        for k, c in found[1:]:
            if c.doc and c.doc not in said:
                docs.append(f"*In `{k}`:* {c.doc}")
                said.add(c.doc)
        definitions[name] = Definition(name, home, ", ".join(types), " ".join(docs))
    return definitions


def render_reference(columns: dict[str, list[Column]]) -> str:
    """The Markdown tables: one per file, one definition per column across all of them."""
    definitions = define_columns(columns)
    parts = []
    for class_name, title in ROW_FILES:
        rows = columns[class_name]
        parts.append(f"### {title} (`{class_name}`) {{#{class_name.lower()}}}\n")
        header = ", ".join(f"`{c.name}`" for c in rows)
        parts.append(f"Columns in file order: {header}.\n")
        shared = [c.name for c in rows if definitions[c.name].home != class_name]
        if shared:
            links = ", ".join(f"[`{name}`](#{anchor(name)})" for name in shared)
            parts.append(f"Defined above: {links}.\n")
        own = [definitions[c.name] for c in rows if definitions[c.name].home == class_name]
        if own:
            parts.append("| column | type | meaning |\n| --- | --- | --- |")
            for d in own:
                cell = _cell(d.meaning)
                parts.append(f"| `{d.name}`{{#{anchor(d.name)}}} | `{d.type}` | {cell} |")
            parts.append("")
    return "\n".join(parts)


def render_page(markdown: str, source: str) -> str:
    """docs/schema.md with the tables between PLACEHOLDER and END generated afresh."""
    if markdown.count(PLACEHOLDER) != 1 or markdown.count(END) > 1:
        raise ValueError(f"docs/schema.md must hold {PLACEHOLDER} (then {END}) exactly once")
    head, rest = markdown.split(PLACEHOLDER)
    tail = rest.split(END, 1)[1] if END in rest else rest
    tables = render_reference(read_columns(source))
    return f"{head}{PLACEHOLDER}\n\n{tables.strip()}\n\n{END}{tail}"


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    """mkdocs event: fill in the schema page; every other page passes through."""
    if page.file.src_uri != "schema.md":
        return markdown
    return render_page(markdown, SCHEMA_SOURCE.read_text())


def on_config(config: Any, **kwargs: Any) -> Any:
    """mkdocs event: rebuild when the schema (collectors/) changes under `mkdocs serve`."""
    config.watch.append(str(SCHEMA_SOURCE.parent))
    return config


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        PAGE.write_text(render_page(PAGE.read_text(), SCHEMA_SOURCE.read_text()))
    else:
        sys.stdout.write(render_reference(read_columns(SCHEMA_SOURCE.read_text())))
