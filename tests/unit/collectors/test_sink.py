"""run_sinks: rank 0's results.csv and samples.csv, closed on every exit, nothing on other ranks,
and each measurement's samples written before the row that commits it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from distbench.collectors.schema import RESULTS_CSV, SAMPLES_CSV, SampleRow
from distbench.collectors.sink import read_rows, run_sinks


@dataclass(frozen=True)
class Row:
    """A results.csv row reduced to what these tests need."""

    run_id: str
    measurement: str
    time_us_p50: float


def test_rows_written_before_an_exception_survive_and_the_files_are_closed(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="rank died"), run_sinks(tmp_path, Row, "r1", True) as s:
        assert s is not None
        s.write([SampleRow("ws2/i0", -1, 0, -1, 5.0)], Row("r1", "ws2/i0", 5.0))
        raise RuntimeError("rank died")
    assert s.results._file.closed and s.samples._file.closed
    assert [r["measurement"] for r in read_rows(tmp_path / RESULTS_CSV)] == ["ws2/i0"]
    samples = read_rows(tmp_path / SAMPLES_CSV)
    assert [(r["measurement"], r["time_us"], r["run_id"]) for r in samples] == [
        ("ws2/i0", "5.0", "r1")
    ]


def test_a_process_that_does_not_write_gets_none_and_no_files(tmp_path: Path) -> None:
    with run_sinks(tmp_path, Row, "r1", False) as sinks:
        assert sinks is None
    assert list(tmp_path.iterdir()) == []


def test_a_failure_while_writing_the_samples_leaves_the_measurement_uncommitted(
    tmp_path: Path,
) -> None:
    """The row commits a measurement for --resume: it is written after its samples, never before."""

    def broken() -> Iterator[SampleRow]:
        yield SampleRow("ws2/i0", 0, 0, -1, 1.0)
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"), run_sinks(tmp_path, Row, "r1", True) as s:
        assert s is not None
        s.write(broken(), Row("r1", "ws2/i0", 1.0))
    assert read_rows(tmp_path / RESULTS_CSV) == []


def test_cells_keep_every_digit_empty_nan_and_a_rows_own_run_id(tmp_path: Path) -> None:
    """The writer reads cells by attrgetter: floats round-trip (repr), NaN is an empty cell, a
    sample with a run_id keeps it and one without gets the sink's."""
    value = 0.1 + 0.2  # 0.30000000000000004: str() of old numpy scalars lost the last digits
    with run_sinks(tmp_path, Row, "r1", True) as sinks:
        assert sinks is not None
        own = SampleRow("ws2/i0", -1, 1, -1, 2.5, run_id="other")
        sinks.write([SampleRow("ws2/i0", -1, 0, -1, value), own], Row("", "ws2/i0", float("nan")))
    samples = read_rows(tmp_path / SAMPLES_CSV)
    assert [(r["time_us"], r["loss"], r["run_id"]) for r in samples] == [
        ("0.30000000000000004", "", "r1"),
        ("2.5", "", "other"),
    ]
    assert float(samples[0]["time_us"]) == value
    assert read_rows(tmp_path / RESULTS_CSV) == [
        {"run_id": "", "measurement": "ws2/i0", "time_us_p50": ""}
    ]
