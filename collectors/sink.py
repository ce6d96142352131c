"""Append-only CSV files that survive a crash: each write is whole lines, flushed and fsynced, so a
killed run leaves every finished row and a file that parses.

A row's cells are read by one `operator.attrgetter` of the sink's columns, in order: about 50x
faster than `dataclasses.astuple` (which deep-copies every field) plus `replace` for the run id,
which cost 44 us a row, minutes for a million samples (docs/performance.md)."""

from __future__ import annotations

import csv
import io
import operator
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from distbench.collectors.schema import RESULTS_CSV, SAMPLES_CSV, SampleRow, column_names


def row_cells(columns: list[str], run_id: str) -> Callable[[Any], list[Any]]:
    """row -> its cells in `columns`' order: NaN an empty cell (the only value that differs
    from itself), floats as csv writes them, repr (round-trips: no digits lost), the rest as
    str; a row whose `run_id` is empty gets `run_id` (when not empty)."""
    getter = operator.attrgetter(*columns)
    single = len(columns) == 1  # attrgetter of one name returns the value, not a 1-tuple
    run_at = columns.index("run_id") if run_id else -1

    def cells(row: Any) -> list[Any]:
        values = [v if v == v else "" for v in ((getter(row),) if single else getter(row))]
        if run_at >= 0 and not values[run_at]:
            values[run_at] = run_id
        return values

    return cells


class CsvSink:
    """results.csv or samples.csv of one run directory, opened for appending.

    `run_id`: the run the file belongs to; rows with an empty `run_id` field get it (samples are
    built without one, and a file of several runs' samples must still tell them apart)."""

    def __init__(self, path: Path, row_type: type, run_id: str = "") -> None:
        self.path = Path(path)
        self.columns = column_names(row_type)
        self.run_id = run_id if "run_id" in self.columns else ""
        self._cells = row_cells(self.columns, self.run_id)
        new = not self.path.exists() or self.path.stat().st_size == 0
        self._file = open(self.path, "a", newline="", encoding="utf-8")  # noqa: SIM115
        if new:
            self._write_lines([self.columns])

    def _write_lines(self, lines: Iterable[Iterable[Any]]) -> None:
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(lines)
        self._file.write(buffer.getvalue())  # one write of whole lines
        self._file.flush()
        os.fsync(self._file.fileno())

    def write(self, rows: Iterable[Any]) -> None:
        """Append dataclass rows of the sink's type (rows with an empty run_id get the sink's)."""
        self._write_lines(map(self._cells, rows))

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> CsvSink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class RunSinks:
    """Rank 0's results.csv and samples.csv of one run directory (run_sinks opens them)."""

    results: CsvSink
    samples: CsvSink

    def write(self, samples: Iterable[SampleRow], row: Any) -> None:
        """A measurement's samples, then its row: the row commits the measurement (a resumed run
        skips the measurements results.csv holds)."""
        self.samples.write(samples)
        self.results.write([row])


@contextmanager
def run_sinks(
    run_dir: Path | str, row_type: type, run_id: str, writer: bool
) -> Iterator[RunSinks | None]:
    """The run's sinks if this process writes them (`writer`: rank 0), else None: results.csv of
    `row_type` rows and samples.csv, whose rows get `run_id`. Closed on every exit, an
    exception's included."""
    with ExitStack() as stack:
        sinks = None
        if writer:
            results = stack.enter_context(CsvSink(Path(run_dir) / RESULTS_CSV, row_type))
            samples = CsvSink(Path(run_dir) / SAMPLES_CSV, SampleRow, run_id=run_id)
            sinks = RunSinks(results, stack.enter_context(samples))
        yield sinks


def count_rows(path: Path) -> int:
    """Data rows in a CSV written by CsvSink (0 when missing)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return max(0, sum(1 for _ in handle) - 1)
    except FileNotFoundError:
        return 0


def read_rows(path: Path) -> list[dict[str, str]]:
    """Every row as strings (the CLI's table needs no pandas)."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    except FileNotFoundError:
        return []


def finished_measurements(run_dir: Path) -> tuple[str, ...]:
    """Measurement ids with a row in the run's results.csv, in order: what a resumed run skips."""
    rows = read_rows(Path(run_dir) / RESULTS_CSV)
    return tuple(dict.fromkeys(row["measurement"] for row in rows if row.get("measurement")))
