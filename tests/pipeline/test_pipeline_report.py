"""A pipeline run in `distbench report` (its section, table and figure) and in `distbench compare`
(rows matched as cases by strategy, world size and microbatches)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli, run_in_process


def test_report_and_compare_take_pipeline_rows(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = run_cli(
        "pipeline", "--strategies", "sendrecv,pipelining", "--microbatches", "1,2",
        "--depth", "3", "--width", "16", "--batch-size", "8", "--steps", "2", "--warmup", "1",
        "--out", str(run),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = run_in_process("report", str(run), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "## Pipeline parallelism" in markdown
    assert "fig-pipeline.png" in markdown and (tmp_path / "report" / "fig-pipeline.png").exists()
    table = [line for line in markdown.splitlines() if line.startswith("| run | strategy |")]
    assert table and "bubble theory" in table[0] and "max param diff" in table[0]
    compare = run_in_process("compare", str(run), str(run))
    assert compare.returncode == 0, compare.stderr + compare.stdout
    assert "distbench compare: pass (4 cannot tell)" in compare.stdout  # one launch a side
    rows = [line for line in compare.stdout.splitlines() if line[:1].isdigit()]
    for strategy in ("sendrecv", "pipelining"):
        found = [line for line in rows if " pipeline " in line and f" {strategy} " in line]
        assert len(found) == 2, compare.stdout
