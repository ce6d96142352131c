"""The kinds of results.csv: which row dataclass a file holds (told by its header), and the
columns that make two rows of a kind one case (compare and report match on them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

from distbench.collectors.rows_pipeline import PIPELINE_CASE_COLUMNS, PipelineRow
from distbench.collectors.schema import COMM_MATCH_KEY, DDP_MATCH_KEY, DdpRow, ResultRow

ROW_TYPES: dict[str, type] = {"comm": ResultRow, "ddp": DdpRow, "pipeline": PipelineRow}
"""Kind -> the dataclass of its results.csv rows."""

MATCH_KEYS: dict[str, tuple[str, ...]] = {
    "comm": COMM_MATCH_KEY,
    "ddp": DDP_MATCH_KEY,
    "pipeline": PIPELINE_CASE_COLUMNS,
}
"""Kind -> the columns on which two rows are the same case."""

OWN_SECTION_PRIMITIVES = ("init", "rpc", "overlap")
"""Primitives of communication rows that are not collectives (`distbench init`, `distbench rpc`):
each has its own report section, and none joins the collectives' tables, fit or scaling."""

CASE_DEFAULTS: dict[str, str] = {
    "nnodes": "1",
    **{
        f.name: str(f.default)
        for f in fields(ResultRow)
        if f.name in ("api", "placement", "graph", "buffers")
    },
}
"""The value every communication case has in these key columns unless an option changed it (one
node, c10d, out of place, no CUDA graph, regular buffers; the schema's defaults): a name or a
table leaves a column out at this value (history's case names, export's names, report's
tables, each the columns it does not name otherwise)."""

WINDOWED = ("ddp", "pipeline")
"""Kinds whose samples are windows of training steps (independent units, one per window)."""


def kind_of_header(header: Sequence[str]) -> str:
    """pipeline rows have `microbatches`, ddp rows `strategy`, communication rows neither."""
    if "microbatches" in header:
        return "pipeline"
    return "ddp" if "strategy" in header else "comm"


def kind_of(row_type: type) -> str:
    return next(kind for kind, known in ROW_TYPES.items() if known is row_type)


INTEGER_TYPES = ("int", "int | None")
"""A schema column of whole numbers; `int | None` is empty where it does not apply (DdpRow's bytes
per step at world size 1)."""


def numeric_columns(row_type: type) -> list[str]:
    """Columns declared int or float in a schema dataclass (annotations are strings here)."""
    return [f.name for f in fields(row_type) if str(f.type) in (*INTEGER_TYPES, "float")]
