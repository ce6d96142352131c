"""mkdocs hook: the per-version changes on docs/upgrading.md, generated from the one migration
table, collectors/migrations.py's MIGRATIONS, so the page and the loader can never disagree.

    python docs/hooks/migrations.py        # print the generated Markdown
"""

from __future__ import annotations

import sys
from typing import Any

from distbench.collectors.migrations import FILE_KINDS, MIGRATIONS, Migration

PLACEHOLDER = "<!-- migrations -->"
FILES = {
    "comm": "results.csv",
    "ddp": "results.csv (ddp)",
    "pipeline": "results.csv (pipeline)",
    "samples": "samples.csv",
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


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if page.file.src_uri != "upgrading.md":
        return markdown
    if markdown.count(PLACEHOLDER) != 1:
        raise ValueError(f"docs/upgrading.md must hold {PLACEHOLDER} exactly once")
    return markdown.replace(PLACEHOLDER, render_all())


if __name__ == "__main__":
    sys.stdout.write(render_all() + "\n")
