"""`distbench pairs`' send/recv case keeps one name over its sizes (#26 item 11, as sendrecv's in
tests/unit/comm/test_sendrecv_window_key.py). The half that launches or runs for seconds; the
in-process half, and the file's whole story: tests/unit/pairs/test_pairs_window_key.py."""

from __future__ import annotations

from pathlib import Path

from distbench.collectors.sink import read_rows
from distbench.reports.load import load_runs
from distbench.reports.report.pairs import pair_matrices, read_ranks, split_matrix_rows
from tests.integration.pairs.test_pairs_e2e import run_pairs


def test_a_real_run_is_one_case_one_matrix_with_its_standings(tmp_path: Path) -> None:
    """3 ranks at 1M and 2M (default windows 64 and 32): one pattern, window_msgs per size,
    ranks.csv per size, and one pair matrix at 2M with its standings (0.2.0: two matrices,
    `pairs:bidir-window=64` at 1M and `pairs:bidir-window=32` at 2M)."""
    run_dir = tmp_path / "run"
    done = run_pairs(run_dir, 3, None, "--sizes", "1M,2M", "--iters", "1", "--trials", "2")
    assert done.returncode == 0, done.stderr
    rows = read_rows(run_dir / "results.csv")
    assert sorted({(r["size_bytes"], r["pattern"], r["window_msgs"]) for r in rows}) == [
        ("1048576", "pairs:bidir-window", "64.0"),
        ("2097152", "pairs:bidir-window", "32.0"),
    ]
    planned = [r for r in rows if int(r["measurement"].rsplit("/i", 1)[1]) < 6]
    assert len(planned) == 6  # 3 pairs x 2 sizes; more rows only where a rank was flagged once
    flagged = {(r["size_bytes"], r["rank"]) for r in read_rows(run_dir / "ranks.csv")
               if float(r["first_z"]) <= -3.5}  # fmt: skip
    again = [r for r in rows if r not in planned]
    assert all({(r["size_bytes"], r["src"]), (r["size_bytes"], r["dst"])} & flagged
               for r in again), again  # fmt: skip
    standings = read_rows(run_dir / "ranks.csv")
    assert sorted((r["size_bytes"], r["rank"]) for r in standings) == [
        (size, rank) for size in ("1048576", "2097152") for rank in ("0", "1", "2")
    ]
    assert "outliers (ranks): " in done.stdout

    loaded = load_runs([run_dir])
    lines, pairs = split_matrix_rows(loaded.comm.assign(source="vm"))
    assert lines.empty and len(pairs) == len(rows)
    [matrix] = pair_matrices(pairs, read_ranks(loaded.runs))
    assert "2M" in matrix.title and matrix.symmetric
    assert list(matrix.standings["unit"]) == ["0", "1", "2"]
    assert matrix.matrix.notna().sum().sum() == 6  # 3 pairs, both halves
