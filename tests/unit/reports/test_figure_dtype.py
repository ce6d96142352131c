"""A crowded report draws one dtype (reports/report/shown.py): past MOST_LINES lines a panel,
the collectives' figures and fig-compare keep float32 (else the dtype of most rows), and a note
says which dtypes are not drawn; the tables keep every dtype."""

from __future__ import annotations

import itertools
from pathlib import Path

import pandas as pd

from distbench.reports.report.page.build import build_report
from distbench.reports.report.shown import MOST_LINES, dtype_left_out, figure_dtype, of_dtype
from tests.bench_report import write_run


def lines(
    sources: int, world_sizes: int, dtypes: list[str], extra: dict[str, int] | None = None
) -> pd.DataFrame:
    """One row per primitive x mode x line, a line per source x world size x dtype; `extra`:
    more rows of a dtype (its line at more sizes)."""
    rows = []
    for source, n, dtype in itertools.product(range(sources), range(world_sizes), dtypes):
        for size in range(1 + (extra or {}).get(dtype, 0)):
            series = f"s{source} n={n} {dtype}"
            rows.append(("all_reduce", "latency", series, dtype, size))
    return pd.DataFrame(rows, columns=["primitive", "mode", "series", "dtype", "size_bytes"])


def test_few_lines_draw_every_dtype() -> None:
    assert figure_dtype(lines(2, 2, ["float32", "bfloat16"])) is None  # 8 lines
    assert figure_dtype(lines(3, 4, ["float32"])) is None  # 12 lines, one dtype
    assert figure_dtype(lines(4, 4, ["float32"])) is None  # 16, but nothing to leave out
    assert figure_dtype(lines(0, 0, [])) is None


def test_past_the_limit_one_dtype_float32_first() -> None:
    crowded = lines(2, 4, ["int32", "bfloat16", "float32", "float16", "float64"])
    assert crowded["series"].nunique() == 40 > MOST_LINES
    assert figure_dtype(crowded) == "float32"
    assert set(of_dtype(crowded, "float32")["dtype"]) == {"float32"}
    assert of_dtype(crowded, None) is crowded


def test_without_float32_the_dtype_of_most_rows_then_by_name() -> None:
    assert figure_dtype(lines(4, 2, ["int32", "bfloat16"], {"int32": 2})) == "int32"
    assert figure_dtype(lines(4, 2, ["int32", "bfloat16"])) == "bfloat16"  # a tie: by name


def test_the_note_names_what_is_not_drawn_and_how_crowded() -> None:
    crowded = lines(2, 4, ["float32", "float16", "bfloat16"])
    (note,) = dtype_left_out(crowded, "float32")
    assert "draw float32 only" in note
    assert "up to 24 lines" in note
    assert f"at most {MOST_LINES}" in note
    assert "not drawn: bfloat16, float16" in note
    assert dtype_left_out(crowded, None) == []


def test_a_crowded_report_draws_float32_and_tables_keep_every_dtype(tmp_path: Path) -> None:
    """Two synthetic runs of 5 dtypes (tests/bench_report.py's, 2 sizes): 40 lines a panel."""
    runs = [tmp_path / "a100", tmp_path / "h100"]
    for i, (path, speed) in enumerate(zip(runs, (1.0, 1.8), strict=True)):
        write_run(path, path.name, 2, speed, seed=i)
    files = build_report([str(p) for p in runs], str(tmp_path / "report"))
    text = files.markdown.read_text()
    assert "figures draw float32 only: with every dtype a panel would hold up to 40 lines" in text
    assert "not drawn: bfloat16, float16, float64, int32" in text
    for dtype in ("bfloat16", "float16", "float64", "int32"):
        assert f"| {dtype} |" in text  # the key results still list every dtype
