"""alltoallv: the split matrices (--skew, the MoE form), the byte columns and busbw convention, a
real gloo run with --check that report and compare accept, and every bad value in one line. The half
that launches or runs for seconds; the in-process half, and the file's whole story:
tests/unit/comm/test_alltoallv.py."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from tests.conftest import run_cli, run_in_process


def test_alltoallv_runs_checks_reports_and_compares(tmp_path: Path) -> None:
    runs = []
    for index, form in enumerate(
        (
            ["--sizes", "4K,64K", "--skew", "zipf:1.2", "--seed", "3"],
            ["--tokens", "64", "--hidden", "32", "--experts", "6", "--topk", "2"],
        )
    ):
        out = tmp_path / f"run{index}"
        result = run_cli(
            "alltoallv", "--backend", "gloo", "--world-sizes", "3", "--iters", "4",
            "--trials", "3", "--check", "--out", str(out), *form,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        runs.append(out)
        rows = list(csv.DictReader((out / "results.csv").open()))
        for row in rows:
            assert row["primitive"] == "all_to_allv" and row["wrong"] == "0"
            send = [int(float(row[f"send_bytes_{end}"])) for end in ("min", "max")]
            recv = [int(float(row[f"recv_bytes_{end}"])) for end in ("min", "max")]
            assert send == [int(row["size_bytes"])] * 2  # every rank sends the same
            assert recv[0] < int(row["size_bytes"]) < recv[1]
            busiest = max(send[1], recv[1])
            assert float(row["imbalance"]) == pytest.approx(busiest / int(row["size_bytes"]))
            time_s = float(row["time_us_p50"]) / 1e6
            assert float(row["algbw_GBps"]) == pytest.approx(busiest / time_s / 1e9, rel=1e-6)
            assert 0 < float(row["busbw_factor"]) < 1
            assert math.isclose(
                float(row["busbw_GBps"]), float(row["algbw_GBps"]) * float(row["busbw_factor"])
            )
        assert rows[0]["pattern"].startswith("moe:E=6,K=2" if index else "zipf:1.2,seed=3")
        assert "imbalance" in result.stdout
    assert [len(list(csv.DictReader((r / "results.csv").open()))) for r in runs] == [2, 1]
    report = run_in_process("report", str(runs[0]), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr[-3000:]
    assert "all_to_allv" in (tmp_path / "report" / "report.md").read_text()
    compare = run_in_process("compare", str(runs[0]), str(runs[0]))
    assert compare.returncode == 0, compare.stdout[-3000:] + compare.stderr[-3000:]
