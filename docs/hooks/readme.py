"""mkdocs hook: the site's front page is README.md, so the two never drift apart.

README.md links into the manual as `docs/<page>.md` (right on GitHub); on the site those links
lose the `docs/` prefix. Any other relative link in README.md fails `mkdocs build --strict`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parents[2] / "README.md"
DOCS_LINK = re.compile(r"\]\(docs/")
"""The start of a Markdown link or image into docs/."""


def render_front_page(readme: str) -> str:
    """README.md's text with its links into docs/ made relative to docs/."""
    return DOCS_LINK.sub("](", readme)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    """mkdocs event: index.md shows README.md; every other page passes through."""
    if page.file.src_uri != "index.md":
        return markdown
    return render_front_page(README.read_text())


def on_config(config: Any, **kwargs: Any) -> Any:
    """mkdocs event: rebuild when README.md changes under `mkdocs serve`."""
    config.watch.append(str(README))
    return config
