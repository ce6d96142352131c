"""The report of `distbench pairs` runs: the pair matrix filled on both sides (one measurement per
pair, both directions), the slow rank of a real run (tests/inject/slow_rank wrapper, loaded only
here) marked in the matrix table, the standings table and the per-rank bars from ranks.csv; an
all_reduce pairs run drawn as a matrix too; a run without ranks.csv (older runs) still reported."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from distbench.reports.load import load_runs
from distbench.reports.report.build import build_report
from distbench.reports.report.pairs import pair_matrices, read_ranks, split_matrix_rows
from tests.pairs.test_pairs_e2e import SLOW_DELAY, STEADY, WINDOW, run_pairs

pytestmark = pytest.mark.slow


def markdown_table(text: str, title: str) -> list[list[str]]:
    """The cells of the Markdown table under the line that starts with `title`."""
    block = text.split(title, 1)[1].split("\n\n")[1]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in block.splitlines()]


def test_the_report_marks_the_slow_rank(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = run_pairs(run_dir, 6, f"4:{SLOW_DELAY}", *WINDOW, *STEADY)
    assert done.returncode == 0, done.stderr
    loaded = load_runs([run_dir])
    lines, pairs = split_matrix_rows(loaded.comm.assign(source="vm"))
    assert lines.empty and len(pairs) == 15
    [matrix] = pair_matrices(pairs, read_ranks(loaded.runs))
    assert matrix.symmetric and matrix.axis == "rank" and matrix.outliers == ["4"]
    values = matrix.matrix.to_numpy()
    off_diagonal = [values[i, j] for i in range(6) for j in range(6) if i != j]
    assert not any(math.isnan(v) for v in off_diagonal)  # both halves filled
    assert (values == values.T).sum() == 30  # symmetric (NaN on the diagonal is never equal)
    assert list(matrix.standings["unit"]) == ["0", "1", "2", "3", "4", "5"]
    assert list(matrix.standings["outlier"]) == [False] * 4 + [True, False]

    files = build_report([str(run_dir)], str(tmp_path / "report"))
    html = files.html.read_text()
    text = files.markdown.read_text()
    grid = markdown_table(text, "**algbw GB/s: run · 6 ranks · 64K float32 (symmetric")
    marked = ["0", "1", "2", "3", "4 (outlier)", "5"]
    assert grid[0] == ["src \\ dst rank", *marked]
    assert [row[0] for row in grid[2:]] == marked
    standings = markdown_table(text, "**Standings: run · 6 ranks · 64K float32**")
    header = ["rank", "host", "pairs", "busbw with a healthy partner GB/s", "robust z"]
    assert standings[0] == [*header, "outlier"]
    assert [(row[0], row[5]) for row in standings[2:]] == [
        ("0", "false"), ("1", "false"), ("2", "false"), ("3", "false"), ("4", "true"),
        ("5", "false"),
    ]  # fmt: skip
    assert "4 (outlier)" in html and "Standings: run" in html
    assert "symmetric: one measurement per pair, both ways" in html
    assert (tmp_path / "report" / "fig-sendrecv-pairs.png").exists()
    assert (tmp_path / "report" / "fig-pairs-ranks.png").exists()


def test_allreduce_pairs_are_a_matrix_and_a_run_without_ranks_csv_still_reports(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "run"
    done = run_pairs(run_dir, 3, None, "--primitive", "allreduce")
    assert done.returncode == 0, done.stderr
    (run_dir / "ranks.csv").unlink()  # as a run written before ranks.csv existed
    loaded = load_runs([run_dir])
    lines, pairs = split_matrix_rows(loaded.comm.assign(source="vm"))
    assert lines.empty and set(pairs["primitive"]) == {"all_reduce"}
    [matrix] = pair_matrices(pairs, read_ranks(loaded.runs))
    assert matrix.value == "busbw" and matrix.symmetric and matrix.outliers == []
    assert matrix.standings.empty
    assert matrix.matrix.notna().sum().sum() == 6  # 3 pairs, both halves
    text = build_report([str(run_dir)], str(tmp_path / "again")).markdown.read_text()
    assert "**busbw GB/s: " in text
    assert "pairs: no ranks.csv next to the pairs rows, so no standings" in text
    assert not (tmp_path / "again" / "fig-pairs-ranks.png").exists()
