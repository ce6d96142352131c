"""The terminal table shows a spread beside the p50 (issue #26 item 9: one command gave 3282 us
and then 1173 us at 1M, 2.8x apart, with nothing on screen to warn): the trials' (max - min) /
p50 (latency mode: (p95 - min) / p50 of the isolated ops), labelled in the table's header, and a
flag with a footnote when it is wide. Pure rendering here; a real 2-rank gloo run's table in
tests/unit/comm/test_sendrecv_window_key.py."""

from __future__ import annotations

from distbench.comm.table import WIDE_SPREAD, render_table, spread_cell


def row(p50: str, low: str, high: str, mode: str = "throughput", p95: str = "") -> dict[str, str]:
    return {
        "primitive": "all_reduce", "backend": "gloo", "device": "cpu", "world_size": "2",
        "timer": "perf_counter", "busbw_factor": "1", "size_bytes": "1048576",
        "count": "262144", "dtype": "float32", "op": "sum", "mode": mode,
        "time_us_p50": p50, "time_us_min": low, "time_us_max": high, "time_us_p95": p95,
        "algbw_GBps": "1", "busbw_GBps": "1", "wrong": "-1",
    }  # fmt: skip


def test_the_spread_is_the_trials_range_over_the_p50() -> None:
    assert spread_cell(row("1000", "950", "1100")) == "15%"
    assert spread_cell(row("1173", "1100", "3282")) == "186%!"  # the two numbers
    # latency: the isolated ops' p95, not their max (one slow op of thousands is the tail)
    assert spread_cell(row("10", "9", "500", "latency", p95="12")) == "30%"
    assert spread_cell(row("10", "", "")) == "-"
    assert spread_cell(row("0", "0", "0")) == "-"
    assert WIDE_SPREAD == 0.5


def test_the_table_labels_the_spread_and_flags_a_wide_one() -> None:
    text = render_table([row("1000", "950", "1100"), row("1173", "1100", "3282")])
    header, columns, steady, wide, note = text.splitlines()
    assert "spread=(max-min)/p50 of the trials" in header
    assert columns.split()[6:8] == ["time_us", "spread"]  # beside the p50
    assert steady.split()[5:7] == ["1000.00", "15%"]
    assert wide.split()[5:7] == ["1173.00", "186%!"]
    assert note == (
        "# ! 1 of 2 rows spread wide (over 50 % of the p50): a p50 this unsteady can differ "
        "between runs by as much; add --trials, use --order interleaved, or a quieter machine"
    )
    assert "!" not in render_table([row("1000", "950", "1100")]).split("spread=")[1]


def test_with_precision_the_wide_spread_note_does_not_advise_what_it_refuses() -> None:
    """--precision added trials already and refuses --order interleaved: its note points at
    ci_pct, what the added trials reached, instead."""
    rows = [{**row("1173", "1100", "3282"), "converged": c} for c in ("true", "false")]
    lines = render_table(rows).splitlines()
    note = next(line for line in lines if line.startswith("# ! "))
    assert note.startswith("# ! 2 of 2 rows spread wide")
    assert note.endswith("ci_pct says how far --precision pinned it down; a quieter machine "
                         "spreads less")  # fmt: skip
    assert "--order interleaved" not in render_table(rows)


def test_cells_wider_than_their_column_stay_apart() -> None:
    """A new user's sendrecv 8-byte row printed `96%!0.0000053140.000005314`: bandwidths keep 4
    significant digits as plain decimals, wider than their column. Every cell is parted from
    the next by a space, and the header stays over its column."""
    slow = row("1505.47", "1000", "2450")
    slow["algbw_GBps"] = slow["busbw_GBps"] = "0.000005314"
    text = render_table([row("1000", "950", "1100"), slow])
    lines = text.splitlines()
    columns, steady, small = lines[1], lines[2], lines[3]
    assert small.split()[5:9] == ["1505.47", "96%!", "0.000005314", "0.000005314"]
    assert len(small) == len(steady) == len(columns)  # one width per column, every row
    for name in ("algbw_GBps", "busbw_GBps"):  # right-aligned over its cells
        end = columns.index(name) + len(name)
        assert small[:end].endswith("0.000005314") and not small[end - 12].strip()


def test_notes_say_which_interval_ci_pct_is_and_advise_only_what_is_not_in_use() -> None:
    """A new user read a throughput row at `+-5.6  false` under --precision 10% as a
    contradiction (ci_pct is the 95 % interval; convergence is on the 99 % one at 3 looks), and
    was advised --order interleaved on a table measured with it."""
    rows = [{**row("1000", "950", "1100"), "converged": "false"}]
    assert render_table(rows).splitlines()[-1].startswith("# ci_pct is the p50's 95 % interval;")
    latency = [{**rows[0], "mode": "latency", "time_us_p95": "1100"}]
    assert "99 %" not in render_table(latency)  # latency prints the interval it stops on
    for order in ("interleaved", "grouped"):  # both spread a row's trials over others'
        wide = [{**row("1173", "1100", "3282"), "trial_order": order}]
        note = render_table(wide).splitlines()[-1]
        assert note.endswith("add --trials, or a quieter machine"), note


def test_received_bytes_read_in_the_sizes_units() -> None:
    """alltoallv's recv_bytes_max: exact sizes as the size column prints them, others in 3
    significant digits of the largest unit reached; raw bytes printed 1461152 beside 9471K."""
    from distbench.comm.table import bytes_cell, cell

    assert [bytes_cell(n) for n in (9471 << 10, 1461152, 1048572, 1536, 1000, 3 << 30)] == [
        "9471K", "1.39M", "1.00M", "1.50K", "1000", "3G",
    ]  # fmt: skip
    assert cell({"recv_bytes_max": "1461152.0"}, "recv_bytes_max") == "1.39M"
    assert cell({"recv_bytes_max": ""}, "recv_bytes_max") == "-"
