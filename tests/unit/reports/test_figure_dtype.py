"""A crowded panel draws one dtype (reports/report/shown.py): past MOST_LINES lines, a panel of
the collectives' figures and fig-compare keeps float32 (else its dtype of most rows), other
panels draw every row, and a note says which dtypes are not drawn where; the tables keep every
dtype."""

from __future__ import annotations

import itertools
from pathlib import Path

import pandas as pd

from distbench.reports.report.page.build import build_report
from distbench.reports.report.shown import MOST_LINES, dtype_left_out, figure_dtypes, of_dtype
from tests.bench_report import write_run

PANEL = ("all_reduce", "latency")


def lines(
    sources: int,
    world_sizes: int,
    dtypes: list[str],
    extra: dict[str, int] | None = None,
    panel: tuple[str, str] = PANEL,
) -> pd.DataFrame:
    """One panel's rows, a line per source x world size x dtype; `extra`: more rows of a dtype
    (its lines at more sizes)."""
    rows = []
    for source, n, dtype in itertools.product(range(sources), range(world_sizes), dtypes):
        for size in range(1 + (extra or {}).get(dtype, 0)):
            rows.append((*panel, f"s{source} n={n} {dtype}", dtype, size))
    return pd.DataFrame(rows, columns=["primitive", "mode", "series", "dtype", "size_bytes"])


def test_few_lines_draw_every_dtype() -> None:
    assert figure_dtypes(lines(2, 2, ["float32", "bfloat16"])) == {}  # 8 lines
    assert figure_dtypes(lines(3, 2, ["float32", "bfloat16"])) == {}  # 12 lines: the limit
    assert figure_dtypes(lines(4, 4, ["float32"])) == {}  # 16, but one dtype: nothing to leave
    assert figure_dtypes(lines(0, 0, [])) == {}


def test_past_the_limit_one_dtype_float32_first() -> None:
    crowded = lines(2, 4, ["int32", "bfloat16", "float32", "float16", "float64"])
    assert crowded["series"].nunique() == 40 > MOST_LINES
    assert figure_dtypes(crowded) == {PANEL: "float32"}
    assert set(of_dtype(crowded, {PANEL: "float32"})["dtype"]) == {"float32"}
    assert of_dtype(crowded, {}) is crowded


def test_without_float32_the_dtype_of_most_rows_then_by_name() -> None:
    assert figure_dtypes(lines(4, 2, ["int32", "bfloat16"], {"int32": 2})) == {PANEL: "int32"}
    assert figure_dtypes(lines(4, 2, ["int32", "bfloat16"])) == {PANEL: "bfloat16"}  # a tie


def test_each_panel_on_its_own_and_no_primitive_vanishes() -> None:
    """A primitive measured without float32, or without a dtype (barrier), keeps its lines."""
    crowded = lines(2, 4, ["float32", "float16"])  # 16 lines: float32
    bf16_only = lines(2, 4, ["bfloat16", "float16"], {"bfloat16": 1}, ("all_gather", "latency"))
    barrier = lines(2, 1, [""], panel=("barrier", "latency"))
    few = lines(1, 2, ["float32", "float16"], panel=("broadcast", "latency"))  # 4 lines
    rows = pd.concat([crowded, bf16_only, barrier, few], ignore_index=True)
    chosen = figure_dtypes(rows)
    assert chosen == {PANEL: "float32", ("all_gather", "latency"): "bfloat16"}
    drawn = of_dtype(rows, chosen)
    assert set(drawn.groupby("primitive")["dtype"].unique().map(frozenset).items()) == {
        ("all_reduce", frozenset({"float32"})),
        ("all_gather", frozenset({"bfloat16"})),
        ("barrier", frozenset({""})),
        ("broadcast", frozenset({"float32", "float16"})),
    }
    (note,) = dtype_left_out(rows, chosen)
    assert "more than 12 lines in a panel (up to 16)" in note
    assert "bfloat16 in all_gather · latency; float32 in all_reduce · latency" in note
    assert "not drawn there: float16" in note


def test_the_note_names_what_is_not_drawn_and_how_crowded() -> None:
    crowded = lines(2, 4, ["float32", "float16", "bfloat16"])
    (note,) = dtype_left_out(crowded, figure_dtypes(crowded))
    assert "(up to 24)" in note
    assert "draw one dtype: float32 in every panel" in note
    assert "not drawn there: bfloat16, float16" in note
    assert dtype_left_out(crowded, {}) == []


def test_a_crowded_report_draws_float32_and_tables_keep_every_dtype(tmp_path: Path) -> None:
    """Two synthetic runs of 5 dtypes (tests/bench_report.py's, 2 sizes): 40 lines a panel."""
    runs = [tmp_path / "a100", tmp_path / "h100"]
    for i, (path, speed) in enumerate(zip(runs, (1.0, 1.8), strict=True)):
        write_run(path, path.name, 2, speed, seed=i)
    files = build_report([str(p) for p in runs], str(tmp_path / "report"))
    text = files.markdown.read_text()
    assert "more than 12 lines in a panel (up to 40)" in text
    assert "draw one dtype: float32 in every panel" in text
    assert "not drawn there: bfloat16, float16, float64, int32" in text
    for dtype in ("bfloat16", "float16", "float64", "int32"):
        assert f"| {dtype} |" in text  # the key results still list every dtype
