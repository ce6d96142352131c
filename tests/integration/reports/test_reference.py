"""`distbench report --reference FILE`. The half that launches or runs for seconds; the in-process
half, and the file's whole story: tests/unit/reports/test_reference.py."""

from __future__ import annotations

from pathlib import Path

from distbench.reports.report.page.build import build_report
from distbench.reports.report.reference import read_references
from tests.unit.reports.test_reference import RUN, measured


def test_report_draws_the_reference_and_the_gap(tmp_path: Path) -> None:
    reference = tmp_path / "expected.toml"
    reference.write_text(
        "[[reference]]\n"
        'primitive = "all_reduce"\nworld_size = 2\nsize = "1M"\nbusbw_GBps = 2.0\n'
        'source = "made up for the test"\n'
        "[[reference]]\n"
        'primitive = "all_reduce"\nworld_size = 2\nsize_bytes = 4194304\nbusbw_GBps = 4.0\n'
    )
    refs = read_references(reference)
    assert [(r.size_bytes, r.busbw_GBps) for r in refs] == [(1 << 20, 2.0), (4 << 20, 4.0)]
    files = build_report([str(RUN)], str(tmp_path / "report"), reference=str(reference))
    text = files.markdown.read_text()
    assert "Is my number OK?" in text
    assert "fig-reference.png" in {p.name for p in files.figures}
    for size, expected, label in (("1048576", 2.0, "1M"), ("4194304", 4.0, "4M")):
        for mode in ("throughput", "latency"):
            gap = (measured("2", size, mode) / expected - 1) * 100
            assert f"| {label} |" in text and f"{gap:+.1f}" in text, (label, mode, gap)
    assert "made up for the test" in text


def test_an_entry_that_matches_no_row_is_named_beside_those_that_do(tmp_path: Path) -> None:
    """Before, a typo in one entry vanished once another entry matched (the note was only for
    a file none of whose entries matched)."""
    reference = tmp_path / "expected.toml"
    reference.write_text(
        "[[reference]]\n"
        'primitive = "all_reduce"\nworld_size = 2\nsize = "1M"\nbusbw_GBps = 2.0\n'
        "[[reference]]\n"
        'primitive = "all_reduce"\nworld_size = 8\nsize = "1G"\nbusbw_GBps = 360\n'
    )
    files = build_report([str(RUN)], str(tmp_path / "report"), reference=str(reference))
    text = files.markdown.read_text()
    assert "Is my number OK?" in text
    assert (
        "--reference: 1 of 2 entries match no measured row: all_reduce world_size=8 size=1G"
    ) in text
