"""nccl-tests' habits (issue #29 item 2). The half that launches or runs for seconds; the in-process
half, and the file's whole story: tests/unit/cli/test_nccl_habits.py."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.unit.cli.test_nccl_habits import (
    ROW_RE,
    expected_average,
    footer_values,
)


def test_a_real_run_prints_the_nccl_tests_table(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = run_cli(
        *("allreduce", "--backend", "gloo", "--world-sizes", "2", "-b", "1K", "-e", "4K"),
        *("-f", "4", "-n", "2", "-w", "1", "--trials", "2", "-c", "1", "-d", "float"),
        *("--table", "nccl-tests", "--quiet", "--out", str(out)),
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    lines = [m for m in map(ROW_RE.match, done.stdout.splitlines()) if m]
    assert [(int(m.group("size")), int(m.group("count"))) for m in lines] == [
        (1024, 256),
        (4096, 1024),
    ]
    assert {m.group("out_wrong").strip() for m in lines} == {"0"}
    with (out / "results.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    bounds, average = footer_values(done.stdout)
    assert bounds == "0" and "# Out of bounds values : 0 OK" in done.stdout
    assert average == pytest.approx(expected_average(rows), rel=1e-5)
