"""A pipeline run in `distbench report` (its section, table and figure) and in `distbench compare`
(rows matched as cases by strategy, world size and microbatches)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import CliRun, run_in_process


def test_report_and_compare_take_pipeline_rows(pipeline_w23: CliRun, tmp_path: Path) -> None:
    """The run of conftest.py's `pipeline_w23` (w2, w3 x M 1, 4: 10 cases of 3 strategies)."""
    run, result = pipeline_w23.out, pipeline_w23.done
    assert result.returncode == 0, result.stderr
    report = run_in_process("report", str(run), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "## Pipeline parallelism" in markdown
    assert "fig-pipeline.png" in markdown and (tmp_path / "report" / "fig-pipeline.png").exists()
    table = [line for line in markdown.splitlines() if line.startswith("| source | strategy |")]
    assert table and "bubble theory" in table[0] and "max param diff" in table[0]
    assert "| MB/step | MB/step of the tensors |" in table[0]  # not raw byte counts
    compare = run_in_process("compare", str(run), str(run))
    assert compare.returncode == 0, compare.stderr + compare.stdout
    assert "distbench compare: pass (10 cannot tell)" in compare.stdout  # one launch a side
    rows = [line for line in compare.stdout.splitlines() if line.strip()[:1].isdigit()]
    for strategy, cases in (("sendrecv", 4), ("pipelining", 4), ("pipelining-1f1b", 2)):
        found = [line for line in rows if " pipeline " in line and f" {strategy} " in line]
        assert len(found) == cases, compare.stdout
