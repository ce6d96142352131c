"""Progress on real 2-rank gloo runs (#21 §2): in a pipe one line per finished measurement and each
primitive's table as soon as it is done; under a pseudo-terminal a live bar naming the running
measurement. Plus the pure parts of launch/progress.py. Two checks ride on launches other files
make anyway: --quiet leaves the tables only (test_order.py's interleaved sweep) and ddp prints
its measurements too (test_ddp.py's resume test, its first run)."""

from __future__ import annotations

import pytest

from distbench.launch.events import describe, parse_begin, part_of
from distbench.launch.progress import format_clock
from tests.conftest import usage_error_line


def test_quiet_takes_no_value(capsys: pytest.CaptureFixture[str]) -> None:
    line = usage_error_line(["allreduce", "--quiet=yes"], capsys)
    assert "--quiet" in line


def test_begin_lines_parse_and_read_for_people() -> None:
    begin = parse_begin("1796105844.382 begin nccl/ws2/i3 all_reduce bfloat16 latency size=1048576")
    assert begin is not None
    assert (begin.measurement, begin.unix_s) == ("nccl/ws2/i3", 1796105844.382)
    assert begin.part == ("nccl/ws2", "all_reduce") == part_of("nccl/ws2/i9", "all_reduce")
    assert describe(begin.measurement, begin.what) == (
        "all_reduce bfloat16 latency size=1M world_size=2"
    )
    assert parse_begin("1796105844.382 end ws2/i3 aggregate_us=3") is None
    assert parse_begin("garbage begin ws2/i3 x") is None
    assert [format_clock(s) for s in (7, 725, 3723)] == ["0:07", "12:05", "1:02:03"]


def test_a_row_without_a_begin_line_says_what_it_measured() -> None:
    """init announces no begin lines: its progress read `done init (ws3/i3)`, no method."""
    from distbench.launch.events import row_what

    row = {"measurement": "ws3/i3", "primitive": "init", "world_size": "3",
           "pattern": "env:init_process_group"}  # fmt: skip
    assert row_what(row) == "init env:init_process_group world_size=3 (ws3/i3)"


def test_round_lines_parse() -> None:
    from distbench.launch.events import parse_round

    found = parse_round("1796105844.382 round 3 of 12 over 9 measurements")
    assert found is not None and (found.number, found.of, found.measurements) == (3, 12, 9)
    assert found.unix_s == 1796105844.382
    assert parse_round("1796105844.382 round over 3 measurements") is None  # --precision's
    assert parse_round("1796105844.382 begin ws2/i3 all_reduce") is None


def test_rank_zero_announces_begins_and_rounds(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """What interleave.run_rounds and the runners log reaches the progress log: begin lines and
    counted rounds; other log lines (and --precision's uncounted rounds) do not."""
    from distbench.groups import announce_measurements
    from distbench.launch.events import parse_round

    logged: list[str] = []
    path = tmp_path / "logs" / "ws2-progress.log"
    log = announce_measurements(logged.append, path)
    begin = "begin ws2/i0 all_reduce float32 latency size=1024"
    for line in (begin, "round 2 of 5 over 3 measurements", "round over 3", "warmup done"):
        log(line)
    assert len(logged) == 4
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and parse_begin(lines[0]) is not None
    assert parse_round(lines[1]) is not None
