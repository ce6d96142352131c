"""mkdocs hook: the per-version changes on docs/upgrading.md, generated from the one migration
table, collectors/migrations.py's MIGRATIONS, so the page and the loader can never disagree.

    python docs/hooks/migrations.py          # print the generated Markdown
    python docs/hooks/migrations.py --write  # write it into docs/upgrading.md (tests check it)

Written between PLACEHOLDER and END, as docs/hooks/columns.py writes schema.md's tables: the page
reads whole without the site, and every build writes it afresh.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from distbench.collectors.migrations import FILE_KINDS, MIGRATIONS, Migration

PLACEHOLDER = "<!-- migrations -->"
END = "<!-- /migrations -->"
PAGE = Path(__file__).resolve().parents[1] / "upgrading.md"
FILES = {
    "comm": "results.csv",
    "ddp": "results.csv (ddp)",
    "pipeline": "results.csv (pipeline)",
    "samples": "samples.csv",
    "ranks": "ranks.csv",
}
"""The page's name for each of collectors/migrations.py's FILE_KINDS (a new kind gets its own
name, `results.csv (KIND)`, until one is written here)."""


def file_name(kind: str) -> str:
    return FILES.get(kind, f"results.csv ({kind})")


def render_migration(migration: Migration) -> str:
    lines = [f"### v{migration.version}", "", migration.summary[0].upper() + migration.summary[1:]]
    rows = []
    for kind in FILE_KINDS:
        for (k, column), value in migration.added.items():
            if k == kind:
                shown = f"`{value}`" if value else "it empty"
                rows.append((file_name(kind), column, f"added; older runs read {shown}"))
        for k, column in migration.removed:
            if k == kind:
                rows.append((file_name(kind), column, "removed; dropped when an older run is read"))
        for (k, column), what in migration.changed.items():
            if k == kind:
                rows.append((file_name(kind), column, f"**meaning changed**: {what}"))
    if rows:
        lines += ["", "| file | column | change |", "| --- | --- | --- |"]
        lines += [f"| {f} | `{c}` | {w} |" for f, c, w in rows]
    return "\n".join(lines)


def render_all() -> str:
    return "\n\n".join(render_migration(m) for m in reversed(MIGRATIONS))


def render_page(markdown: str) -> str:
    """docs/upgrading.md with the changes between PLACEHOLDER and END generated afresh."""
    if markdown.count(PLACEHOLDER) != 1 or markdown.count(END) > 1:
        raise ValueError(f"docs/upgrading.md must hold {PLACEHOLDER} (then {END}) exactly once")
    head, rest = markdown.split(PLACEHOLDER)
    tail = rest.split(END, 1)[1] if END in rest else rest
    return f"{head}{PLACEHOLDER}\n\n{render_all()}\n\n{END}{tail}"


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if page.file.src_uri != "upgrading.md":
        return markdown
    return render_page(markdown)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        PAGE.write_text(render_page(PAGE.read_text()))
    else:
        sys.stdout.write(render_all() + "\n")
