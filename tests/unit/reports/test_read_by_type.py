"""A results.csv read and written back by pandas still matches itself (#26 item 10). pandas turns
distbench's `false` into `False` and, in a column of integers with empty cells (`root`: empty for
all_reduce, 0 for broadcast), `0` into `0.0`. 0.2.0 then found "no row in common" in compare, and
the report's speedup section vanished without a word. reports/cells.py reads every cell by its
column's type; these tests own that rule (later reader work keeps them green)."""

from __future__ import annotations

import pandas as pd

from distbench.reports.cells import canonical_booleans, canonical_cells, canonical_integers


def test_booleans_however_spelled() -> None:
    cells = pd.Series(["True", "FALSE", "false", " true", "", "truth", "1"])
    assert canonical_booleans(cells).tolist() == [
        "true",
        "false",
        "false",
        "true",
        "",
        "truth",
        "1",
    ]


def test_integers_however_spelled() -> None:
    cells = pd.Series(["0.0", "", "1e3", "+4", "-1.0", "2.5", "abc", "0", "1024"])
    expected = ["0", "", "1000", "4", "-1", "2.5", "abc", "0", "1024"]
    assert canonical_integers(cells).tolist() == expected


def test_only_integer_and_key_columns_are_made_integers() -> None:
    """A float column keeps its spelling (metrics are converted on use); a text column that is
    not a key (a label) keeps its text; an int column and a key text column (root) are read as
    integers."""
    from distbench.collectors.schema import COMM_MATCH_KEY, ResultRow

    frame = pd.DataFrame(
        {"root": ["0.0", ""], "label": ["1.0", "x"], "size_bytes": ["1024.0", "8"]}
        | {"time_us_p50": ["5.0", "2.5"], "graph": ["False", "true"]}
    )
    out = canonical_cells(frame, ResultRow, COMM_MATCH_KEY)
    assert out["root"].tolist() == ["0", ""]
    assert out["label"].tolist() == ["1.0", "x"]
    assert out["size_bytes"].tolist() == ["1024", "8"]
    assert out["time_us_p50"].tolist() == ["5.0", "2.5"]
    assert out["graph"].tolist() == ["false", "true"]
