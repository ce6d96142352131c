"""send/recv: the option parsers, which cases a size gives, how a sample is scaled to one message,
and `distbench sendrecv --pairs all` on a real 3-rank gloo group. The half that launches or runs for
seconds; the in-process half, and the file's whole story: tests/unit/comm/test_sendrecv.py."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.conftest import run_cli


@pytest.mark.slow
def test_pairs_all_at_world_size_3_measures_6_ordered_pairs(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run_cli(
        "sendrecv",
        "--backend",
        "gloo",
        "--world-sizes",
        "3",
        "--sizes",
        "8,64K",
        "--pairs",
        "all",
        "--pattern",
        "pingpong,window",
        "--window",
        "4",
        "--bidirectional",
        "--iters",
        "3",
        "--warmup",
        "1",
        "--trials",
        "2",
        "--check",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    with open(out / "results.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["primitive"] for r in rows} == {"send_recv"}
    assert {r["wrong"] for r in rows} == {"0"}
    pairs = [(r["src"], r["dst"]) for r in rows if r["pattern"] == "pingpong"]
    expected = [("0", "1"), ("0", "2"), ("1", "0"), ("1", "2"), ("2", "0"), ("2", "1")]
    assert pairs == expected * 2  # two sizes
    assert [(r["src"], r["dst"]) for r in rows if r["pattern"] == "bidir-window=4"] == expected * 2
    assert {r["busbw_factor"] for r in rows} == {"1.0"}
    assert all(float(r["algbw_GBps"]) == float(r["busbw_GBps"]) for r in rows)
    assert {r["size_bytes"] for r in rows} == {"8", "65536"}
    assert "pattern" in result.stdout and "bidir-window=4" in result.stdout


@pytest.mark.slow
def test_multipair_at_4_ranks_gives_the_aggregate_rate(tmp_path: Path) -> None:
    """--pattern all at world sizes 3 and 4: multipair only at 4 (noted), checked bit-exactly;
    time per message is the window over 2 pairs x W messages, so algbw x time is one message
    and msg_rate_per_s is 1e6 / time_us_p50."""
    out = tmp_path / "run"
    result = run_cli(
        "sendrecv", "--backend", "gloo", "--world-sizes", "3,4", "--sizes", "4K",
        "--pattern", "all", "--window", "4", "--bidirectional", "--iters", "3", "--warmup", "1",
        "--trials", "2", "--check", "--quiet", "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "note: multipair needs an even world size: skipped at [3]" in result.stderr
    with open(out / "results.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["wrong"] for r in rows} == {"0"}
    multi = [r for r in rows if r["pattern"].startswith("multipair")]
    assert [(r["world_size"], r["src"], r["dst"], r["pattern"]) for r in multi] == [
        ("4", "0-1", "2-3", "multipair-bidir-window=4")
    ]
    [row] = multi
    p50 = float(row["time_us_p50"])
    assert float(row["algbw_GBps"]) == pytest.approx(4096 / p50 / 1e3)
    assert float(row["busbw_GBps"]) == float(row["algbw_GBps"])
    assert float(row["msg_rate_per_s"]) == pytest.approx(1e6 / p50)
    assert all(float(r["msg_rate_per_s"]) > 0 for r in rows)  # every send/recv row has one
    assert "msg_rate_per_s" in result.stdout and "multipair-bidir-window=4" in result.stdout
