"""`distbench report --reference FILE`: the expected busbw drawn dashed with the gap in percent
(exact gaps against the frozen v1 fixture's rows), and every bad file one line, exit 2."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.conftest import usage_error_line
from tests.paths import DATA

RUN = DATA / "cluster-a" / "allreduce"


def measured(world_size: str, size: str, mode: str = "throughput") -> float:
    with open(RUN / "results.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            if (row["world_size"], row["size_bytes"], row["mode"]) == (world_size, size, mode):
                return float(row["busbw_GBps"])
    raise AssertionError("fixture row missing")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "cannot read it"),
        ("this is = = not toml", "is not TOML"),
        ("title = 'x'\n", "holds no [[reference]] entries"),
        ("[[reference]]\nprimitive = 'allreduce'\n", "primitive 'allreduce' is not one of"),
        ("[[reference]]\nprimitive = 'all_reduce'\nworld_size = 1\n", "world_size must be"),
        (
            "[[reference]]\nprimitive = 'all_reduce'\nworld_size = 8\nbusbw_GBps = 1\n",
            "give size",
        ),
        (
            "[[reference]]\nprimitive = 'all_reduce'\nworld_size = 8\nsize = '1X'\n"
            "busbw_GBps = 1\n",
            "is not a size",
        ),
        (
            "[[reference]]\nprimitive = 'all_reduce'\nworld_size = 8\nsize = '1M'\n"
            "busbw_GBps = -3\n",
            "busbw_GBps must be a positive number",
        ),
        ("[[reference]]\nprimitive = 'all_reduce'\nbandwidth = 3\n", "unknown key 'bandwidth'"),
    ],
)
def test_bad_reference_file_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, expected: str
) -> None:
    path = tmp_path / "expected.toml"
    if content is not None:
        path.write_text(content)
    argv = ["report", str(RUN), "--out", str(tmp_path / "r"), "--reference", str(path)]
    line = usage_error_line(argv, capsys)
    assert expected in line and str(path) in line, line
    assert not (tmp_path / "r").exists()  # refused before anything was drawn
