"""How the report's cells read, on the frozen fixtures' report (tests/data/cluster-a and -b, the
README's example): one size one spelling (`4M`, never `4194300` beside it), one speedup one
spelling with the headline's caps (`>10×`, never `141` in a table under `[<0.1×, >10×]`), and one
short note for the rows of older schema versions instead of a paragraph per source and kind."""

# ruff: noqa: RUF001, RUF002  (the multiplication sign and en dashes on purpose)

from __future__ import annotations

import math
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest


class TableParser(HTMLParser):
    """Every table of the page: its caption, header cells and body rows, as text."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append({"caption": "", "rows": []})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("th", "td", "caption"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if self._cell is None or tag not in ("th", "td", "caption"):
            return
        text, self._cell = "".join(self._cell), None
        table = self.tables[-1]
        if tag == "caption":
            table["caption"] = text
        else:
            table["rows"][-1].append(text)

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


Table = tuple[list[str], list[list[str]]]
"""A table's header and its rows of cells."""


def page_tables(report: Path) -> dict[str, Table]:
    """caption -> (header, rows) of every table of report.html."""
    parser = TableParser()
    parser.feed((report / "report.html").read_text(encoding="utf-8"))
    return {t["caption"]: (t["rows"][0], t["rows"][1:]) for t in parser.tables}


def markdown_tables(report: Path) -> dict[str, Table]:
    """title -> (header, rows) of every table of report.md."""
    text = (report / "report.md").read_text(encoding="utf-8")
    found = {}
    for title, body in re.findall(r"\*\*(.+?)\*\*\n\n((?:\|.*\n)+)", text):
        lines = [
            [cell.strip() for cell in line.strip("|").split(" | ")] for line in body.splitlines()
        ]
        found[title] = (lines[0], lines[2:])
    return found


def size_columns(header: list[str]) -> list[int]:
    """Columns that hold sizes, not counts of sizes (`sizes`, `sizes matched` ...)."""
    return [
        i
        for i, name in enumerate(header)
        if name.split()[:1] == ["size"] or name in ("smallest", "largest") or "from sizes" in name
    ]


SIZE = re.compile(r"\d+[KMG]")


def test_every_size_a_table_prints_is_a_size_not_a_byte_count(frozen_report: Path) -> None:
    """An all_gather at 3 ranks measures 1K as 1,020 bytes and 4M as 4,194,300: the Key results
    and the fit printed those beside `1K` and `4M` elsewhere, and "All results" printed every size
    in bytes (`size B`: 262144 beside 256K). Raw bytes stay in results.csv and the exports."""
    tables = [*page_tables(frozen_report).items(), *markdown_tables(frozen_report).items()]
    checked = 0
    for caption, (header, rows) in tables:
        for column in size_columns(header):
            for row in rows:
                for end in row[column].split("–"):
                    assert SIZE.fullmatch(end) or end.startswith("all ("), (caption, header, row)
                    checked += 1
    assert checked > 400, checked  # All results, both speedup tables, Key results, the fit
    text = (frozen_report / "report.md").read_text(encoding="utf-8")
    assert not re.search(r"\b(1020|1048572|4194300|262144)\b", text)  # 16380 is a time here


def test_speedups_are_capped_as_the_headline_caps_them() -> None:
    from distbench.reports.report.uncertainty import speedup_interval, speedup_text

    assert [speedup_text(v) for v in (141.0, 10.0, 1.4426, 0.1, 0.008, math.inf)] == [
        ">10×",
        "10.0×",
        "1.44×",
        "0.100×",
        "<0.1×",
        ">10×",
    ]
    assert speedup_text(math.nan) == "—"
    assert speedup_interval(1.32, 0.0512, 34.2) == "1.32× [<0.1×, >10×]"
    assert speedup_interval(0.8, 0.7, 0.95, 0.987) == "0.800× [0.700×, 0.950×] at 98.7 %"
    assert speedup_interval(0.8, math.nan, math.nan) == "0.800×"


CAPPED = r"(<0\.1×|>10×|0\.\d{3}×|\d\.\d\d×|10\.0×)"
SPEEDUP = re.compile(r"speedup|geo\. mean|beyond|^min|^max")
"""The speedup columns' headers: the speedup at the largest size, every size's geometric mean, the
range (min and max, or min–max), the per-size speedup and the one beyond the rest of the run."""
INTERVAL = re.compile(rf"{CAPPED}( \[{CAPPED}, {CAPPED}\]( at \d+(\.\d+)? %)?)?")


@pytest.mark.parametrize("caption", ["Speedup over cluster-a", "Speedup per size"])
def test_the_speedup_tables_print_speedups_as_the_headline_does(
    frozen_report: Path, caption: str
) -> None:
    """The headline capped at `[<0.1×–>10×]` while the summary beneath it printed 0.00238 and
    737 (a send/recv ring's interval), and min and max without a cap."""
    header, rows = page_tables(frozen_report)[caption]
    speedups = [i for i, name in enumerate(header) if SPEEDUP.search(name)]
    assert len(speedups) >= 2, header
    for row in rows:
        for column in speedups:
            for cell in row[column].split("–") if header[column] == "min–max" else [row[column]]:
                assert INTERVAL.fullmatch(cell) or cell == "", (header[column], row)
    lead = (frozen_report / "report.md").read_text(encoding="utf-8").split("\n\n")[1]
    assert "0.8× [<0.1×–>10×]" not in lead  # the headline prints speedups as the tables
    assert re.search(rf"runs at {INTERVAL.pattern} cluster-a's speed", lead), lead


def test_rows_of_older_schema_versions_get_one_short_note(frozen_report: Path) -> None:
    """The README's example report closed on four paragraphs, one per source and kind of v1 row;
    one note says which rows, which columns and where upgrading.md says what changed."""
    text = (frozen_report / "report.md").read_text(encoding="utf-8")
    notes = text.split("## What could not be shown\n\n")[1].split("\n\n")[0].splitlines()
    older = [note for note in notes if "schema v1" in note]
    assert len(older) == 1, older
    note = older[0]
    assert len(note) < 450, len(note)
    for part in ("cluster-a", "cluster-b", "70 comm", "21 ddp", "docs/upgrading.md#v2"):
        assert part in note, note
    assert "step_time_us_*" in note and "samples_per_s" in note and "busbw_GBps" in note
