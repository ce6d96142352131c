"""report.md keeps every section the HTML page has that it can show (issue #26 item 11: "What
differs" was left out of report.md when the manifests agreed, a section of text only, while
report.html said so). On two copies of a frozen real gloo run (tests/data)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import run_cli

DATA = Path(__file__).resolve().parents[1] / "data"


def test_what_differs_is_in_the_markdown_when_the_manifests_agree(tmp_path: Path) -> None:
    for name in ("monday", "tuesday"):
        shutil.copytree(DATA / "cluster-a" / "allreduce", tmp_path / name)
    out = tmp_path / "r"
    done = run_cli("report", str(tmp_path / "monday"), str(tmp_path / "tuesday"), "--out", str(out))
    assert done.returncode == 0, done.stderr
    html = (out / "report.html").read_text()
    markdown = (out / "report.md").read_text()
    assert "The manifests agree on every compared field." in html
    assert "## What differs\n\nThe manifests agree on every compared field." in markdown
    # every section title of the page is in the Markdown too (the HTML-only tables aside)
    titles = [line[3:] for line in markdown.splitlines() if line.startswith("## ")]
    for title in ("What ran, on what", "What differs"):
        assert title in titles
