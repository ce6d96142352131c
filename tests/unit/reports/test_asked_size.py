"""Sizes in labels are the sizes asked for: an all_gather at 3 ranks measures 64K as 65,520 bytes
(whole elements per rank), and history's series and the report's "largest" column read `64K`,
the size the user typed, not `65520` (size_bytes keeps the measured bytes; the CSVs keep both)."""

from __future__ import annotations

import pandas as pd

from distbench.collectors.schema import COMM_MATCH_KEY
from distbench.parse import asked_size
from distbench.reports.history.load import points_of
from distbench.reports.report.speedups import comm_ratios, ratio_summary


def test_asked_size_takes_the_request_only_where_the_measured_size_is_its_rounding() -> None:
    assert asked_size(65_520, 65_536) == 65_536  # 64K at 3 ranks, float32
    assert asked_size(1_008, 1_024) == 1_024  # 1K at 3 ranks
    assert asked_size(65_536, 65_536) == 65_536
    assert asked_size(65_536, None) == 65_536  # a run without requested_bytes
    assert asked_size(65_536, 0) == 65_536
    assert asked_size(16_384, 65_536) == 16_384  # another buffer than the one asked: its own
    assert asked_size(65_540, 65_536) == 65_540  # above the request is never its rounding
    # the cell as a row holds it: text, a float (a column with gaps), or no request at all
    assert asked_size(65_520, "65536") == asked_size(65_520, 65_536.0) == 65_536
    for none in ("", "nan", float("nan"), pd.NA, None):
        assert asked_size(65_520, none) == 65_520


def rows(requested: list[int | None], measured: list[int], source: str = "a") -> pd.DataFrame:
    frame = pd.DataFrame({c: [""] * len(measured) for c in COMM_MATCH_KEY})
    frame["primitive"], frame["backend"], frame["device"] = "all_gather", "gloo", "cpu"
    frame["world_size"], frame["nnodes"], frame["dtype"] = 3, 1, "float32"
    frame["mode"], frame["size_bytes"] = "throughput", measured
    frame["requested_bytes"] = pd.array(requested, dtype="Int64")
    frame["time_us_p50"] = [100.0 + i for i in range(len(measured))]
    frame["time_us_min"] = frame["time_us_p50"] - 1
    frame["source"], frame["run"] = source, f"run-{source}"
    frame["measurement"] = [f"ws3/i{i}" for i in range(len(measured))]
    return frame


def test_history_names_a_series_by_the_size_asked_for() -> None:
    cases = list(points_of("comm", rows([1_024, 65_536, None], [1_008, 65_520, 65_520]))["case"])
    assert cases[0].endswith(" 1K") and cases[1].endswith(" 64K"), cases
    assert cases[2].endswith(" 65520"), cases  # an older run without requested_bytes: measured


def test_the_reports_largest_size_is_the_size_asked_for() -> None:
    both = pd.concat([rows([1_024, 65_536], [1_008, 65_520], s) for s in ("a", "b")])
    both["source"] = pd.Categorical(both["source"], categories=["a", "b"])
    summary = ratio_summary(comm_ratios(both))
    assert list(summary["largest"]) == ["64K"], summary


def test_a_case_name_leaves_out_the_defaults_every_row_has() -> None:
    """A new user read `all_reduce n=2 gloo cpu nnodes=1 float32 sum throughput c10d out false
    regular 1K`: the defaults (one node, c10d, out of place, no graph, regular buffers) name no
    case apart; another value is named with its column."""
    from distbench.reports.history.load import case_label

    values = {c: "" for c in COMM_MATCH_KEY}
    values.update(
        primitive="all_reduce", world_size="2", backend="gloo", device="cpu", nnodes="1",
        dtype="float32", op="sum", mode="throughput", api="c10d", placement="out",
        graph="false", buffers="regular", size_bytes="1024",
    )  # fmt: skip
    assert case_label("comm", values) == "all_reduce n=2 gloo cpu float32 sum throughput 1K"
    values.update(nnodes="2", api="functional", placement="in", graph="true", buffers="symmetric")
    assert case_label("comm", values) == (
        "all_reduce n=2 gloo cpu nnodes=2 float32 sum throughput api=functional placement=in "
        "graph=true buffers=symmetric 1K"
    )


def test_a_size_cell_is_the_size_asked_for_in_k_m_g() -> None:
    from distbench.parse import format_asked_size

    assert format_asked_size(1_020, 1_024) == "1K"  # all_gather at 3 ranks
    assert format_asked_size("4194300", "4194304") == "4M"  # as a CSV cell holds them
    assert format_asked_size(65_520, None) == "65520"  # no request recorded: the bytes measured
    assert format_asked_size(float("nan")) == ""
