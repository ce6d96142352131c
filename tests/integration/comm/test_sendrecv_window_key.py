"""The send/recv window case keeps one name over every size (issue #26 item 11). The half that
launches or runs for seconds; the in-process half, and the file's whole story:
tests/unit/comm/test_sendrecv_window_key.py."""

from __future__ import annotations

from pathlib import Path

from distbench.collectors.sink import read_rows
from tests.conftest import run_cli


def test_a_real_run_has_one_window_case_over_its_sizes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = run_cli(
        "sendrecv", "--backend", "gloo", "--world-sizes", "2", "--sizes", "1M,2M",
        "--pattern", "window", "--iters", "1", "--warmup", "1", "--trials", "2", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = read_rows(out / "results.csv")
    assert [(r["size_bytes"], r["pattern"], r["window_msgs"]) for r in rows] == [
        ("1048576", "window", "64.0"),
        ("2097152", "window", "32.0"),
    ]
    # the terminal table: the spread beside the p50, labelled, each cell a percentage
    header = next(line for line in done.stdout.splitlines() if line.startswith("# send_recv"))
    assert "spread=(max-min)/p50 of the trials" in header
    lines = [line for line in done.stdout.splitlines() if line.strip().startswith(("1M", "2M"))]
    assert len(lines) == 2 and all(line.split()[6].rstrip("!").endswith("%") for line in lines)
