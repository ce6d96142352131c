"""The report groups rows by the schema's case key. The half that launches or runs for seconds; the
in-process half, and the file's whole story: tests/unit/reports/test_report_keys.py."""


# ruff: noqa: RUF001  (the report's headings use Greek letters and en dashes on purpose)

from __future__ import annotations

from pathlib import Path

from distbench.reports.report.page.build import build_report
from tests.unit.reports.test_report_keys import write_canned_run


def test_report_of_canned_rows_with_empty_cells(tmp_path: Path) -> None:
    run = write_canned_run(tmp_path / "run")
    files = build_report([str(run)], str(tmp_path / "out"))
    assert "fig-fit.png" in {p.name for p in files.figures}
    text = files.markdown.read_text(encoding="utf-8")
    key = text.split("**Key results**")[1].split("\n\n")[1].splitlines()
    cpu = [r for r in key if "| cpu | 2 |" in r]  # nodes: 1 in every row, in the table's note
    cuda = [r for r in key if "| cuda | 2 |" in r]
    assert len(cpu) == 1 and len(cuda) == 1
    one_rank = [r for r in key if "| cpu | 1 |" in r]
    assert len(one_rank) == 1 and "—" in one_rank[0]  # no busbw at world size 1
    assert "| α µs | α from sizes | β GB/s | β from sizes |" in text
    assert "1K–16K" in text and "1M–4M" in text
