"""report.md keeps every section the HTML page has that it can show (issue #26 item 11: "What
differs" was left out of report.md when the manifests agreed, a section of text only, while
report.html said so). reports/render.py in process: its sections as differs.py builds them."""

from __future__ import annotations

import pandas as pd

from distbench.reports.render import Section, TableOut, render_html, render_markdown

AGREE = "The manifests agree on every compared field."


def test_a_section_of_text_alone_is_in_the_markdown() -> None:
    sections = [
        Section("What differs", AGREE),  # differs.py's section when the manifests agree
        Section(
            "Long", "HTML only.", tables=[TableOut("t", pd.DataFrame({"a": [1]}), markdown=False)]
        ),
        Section("Empty"),
    ]
    markdown = render_markdown("distbench report", "lead", sections, [], "footer")
    assert f"## What differs\n\n{AGREE}" in markdown
    assert AGREE in render_html("distbench report", "lead", sections, [], "footer")
    # a section whose only tables are HTML-only, or with nothing at all, stays out as before
    titles = [line[3:] for line in markdown.splitlines() if line.startswith("## ")]
    assert titles == ["What differs"]


def test_every_row_table_says_not_checked_instead_of_minus_one() -> None:
    from distbench.reports.report.sections.collectives import checked_text

    rows = pd.DataFrame({"wrong": [-1, 0, 3], "primitive": ["a", "b", "c"]})
    assert checked_text(rows)["wrong"].tolist() == ["not checked", "0", "3"]
    assert checked_text(rows.drop(columns="wrong")).columns.tolist() == ["primitive"]
