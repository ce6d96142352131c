"""The report of `distbench pairs` runs: the pair matrix filled on both sides (one measurement per
pair, both directions), the slow rank of a real run (tests/inject/slow_rank wrapper, loaded only
here) marked in the matrix table, the standings table and the per-rank bars from ranks.csv; an
all_reduce pairs run drawn as a matrix too; a run without ranks.csv (older runs) still reported."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from distbench.reports.load import load_runs
from distbench.reports.report.page.build import build_report
from distbench.reports.report.pairs import pair_matrices, read_ranks, split_matrix_rows
from tests.conftest import CliRun

pytestmark = pytest.mark.slow


def markdown_table(text: str, title: str) -> list[list[str]]:
    """The cells of the Markdown table under the line that starts with `title`."""
    block = text.split(title, 1)[1].split("\n\n")[1]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in block.splitlines()]


def test_the_report_marks_the_slow_rank(six_ranks_one_slow: CliRun, tmp_path: Path) -> None:
    """The e2e test's 6-rank run, rank 5 slowed (its --fail-on-outlier exit 1 is asserted there)."""
    run_dir = six_ranks_one_slow.out
    assert six_ranks_one_slow.done.returncode == 1, six_ranks_one_slow.done.stderr
    loaded = load_runs([run_dir])
    lines, pairs = split_matrix_rows(loaded.comm.assign(source="vm"))
    assert lines.empty and len(pairs) == 15 + 5  # rank 5's pairs measured again (confirmed)
    [matrix] = pair_matrices(pairs, read_ranks(loaded.runs))
    assert matrix.symmetric and matrix.axis == "rank" and matrix.outliers == ["5"]
    values = matrix.matrix.to_numpy()
    off_diagonal = [values[i, j] for i in range(6) for j in range(6) if i != j]
    assert not any(math.isnan(v) for v in off_diagonal)  # both halves filled
    assert (values == values.T).sum() == 30  # symmetric (NaN on the diagonal is never equal)
    assert list(matrix.standings["unit"]) == ["0", "1", "2", "3", "4", "5"]
    assert list(matrix.standings["outlier"]) == [False] * 5 + [True]

    files = build_report([str(run_dir)], str(tmp_path / "report"))
    html = files.html.read_text()
    text = files.markdown.read_text()
    grid = markdown_table(text, "**algbw GB/s: run · 6 ranks · 64K float32 (symmetric")
    marked = ["0", "1", "2", "3", "4", "5 (outlier)"]
    assert grid[0] == ["src \\ dst rank", *marked]
    assert [row[0] for row in grid[2:]] == marked
    standings = markdown_table(text, "**Standings: run · 6 ranks · 64K float32**")
    header = ["rank", "host", "pairs", "busbw with a healthy partner GB/s", "robust z"]
    assert standings[0] == [*header, "outlier"]
    assert [(row[0], row[5]) for row in standings[2:]] == [
        ("0", "false"), ("1", "false"), ("2", "false"), ("3", "false"), ("4", "false"),
        ("5", "true"),
    ]  # fmt: skip
    assert "5 (outlier)" in html and "Standings: run" in html
    assert "symmetric: one measurement per pair, both ways" in html
    assert (tmp_path / "report" / "fig-sendrecv-pairs.png").exists()
    assert (tmp_path / "report" / "fig-pairs-ranks.png").exists()


def test_allreduce_pairs_are_a_matrix_and_a_run_without_ranks_csv_still_reports(
    pairs_allreduce_3: CliRun, tmp_path: Path
) -> None:
    assert pairs_allreduce_3.done.returncode == 0, pairs_allreduce_3.done.stderr
    run_dir = tmp_path / "run"
    shutil.copytree(pairs_allreduce_3.out, run_dir)  # the session's run: change a copy
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
