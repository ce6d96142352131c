"""--env on one side no longer cancels a comparison in silence (issue #26 item 8): when the only
reason two runs' rows do not match is one column of the case (env, api ...), the report's
headline says so and names the column, and reports/keydiff.py gives compare's "no row in common"
error the same clause. Pure logic on rows, then two real 2-rank gloo runs, one with --env."""

from __future__ import annotations

import math

import pandas as pd

from distbench.collectors.schema import COMM_MATCH_KEY
from distbench.reports.keydiff import explain_no_common_rows, key_differences, key_tuples


def row(**changes: str) -> dict[str, str]:
    base = {column: "" for column in COMM_MATCH_KEY}
    base.update(primitive="all_reduce", backend="gloo", device="cpu", world_size="2")
    base.update(nnodes="1", dtype="float32", op="sum", mode="throughput", api="c10d")
    base.update(placement="out", graph="false", buffers="regular", size_bytes="1024")
    return {**base, **changes}


def test_env_alone_is_named_with_both_values_and_what_to_do() -> None:
    base = [row(), row(size_bytes="65536")]
    current = [row(env="NCCL_ALGO=Ring"), row(env="NCCL_ALGO=Ring", size_bytes="65536")]
    assert explain_no_common_rows(base, current) == (
        "they differ only in env: empty (no --env) in the baseline, 'NCCL_ALGO=Ring' in the "
        "current run, and agree on every other column of 2 rows; --env makes each combination "
        "of its variables a case of its own: compare runs measured with the same --env (or give "
        "the baseline the same --env)"
    )
    [difference] = key_differences(base, current)
    assert (difference.column, difference.rows) == ("env", 2)


def test_nothing_to_explain_when_rows_match_or_nothing_is_alike() -> None:
    assert explain_no_common_rows([row()], [row(), row(env="X=1")]) == ""  # one row matches
    other = [row(primitive="broadcast", dtype="bfloat16", size_bytes="8")]
    assert key_differences([row()], other) == []
    assert explain_no_common_rows([row()], other) == (
        "they have no value of primitive, dtype, size_bytes in common: they measured other cases"
    )
    # mutation: the same rows with env equal match, so there is nothing to name
    assert explain_no_common_rows([row(env="X=1")], [row(env="X=1")]) == ""


def test_api_is_named_too() -> None:
    text = explain_no_common_rows([row()], [row(api="functional")], names=("a", "b"))
    assert text.startswith("they differ only in api: 'c10d' in a, 'functional' in b")


def test_a_frame_gives_the_keys_its_records_give() -> None:
    """key_tuples reads a DataFrame by column (fast) and records one by one: the same text for
    numbers, floats, NaN, None, pandas' NA, arrow strings and a missing column."""
    frame = pd.DataFrame(
        {
            "primitive": pd.array(["all_reduce", None, "broadcast"], dtype="string[pyarrow]"),
            "world_size": [2, 3, 4],
            "root": [0.0, math.nan, 1.5],
            "env": pd.array(["A=1", pd.NA, ""], dtype="string"),
            "size_bytes": pd.array([1024, None, 65536], dtype="Int64"),
        }
    )
    columns = ["primitive", "world_size", "root", "env", "size_bytes", "absent"]
    records = frame.to_dict(orient="records")
    assert key_tuples(frame, columns) == key_tuples(records, columns)
    assert ("", "3", "", "", "", "") in key_tuples(frame, columns)
