"""nccl-tests' habits (issue #29 item 2): its short flags spell the same spec as distbench's long
options, `--dtype all` expands as `--root all` does, no command declares a flag twice, and
`--table nccl-tests` prints nccl-tests' lines: sizes in bytes, `# Out of bounds values` from
--check (N/A without it) and `# Avg bus bandwidth`, the mean of the printed busbw column, which the
test recomputes from the rows. Parsing and rendering in-process; one real 2-rank gloo launch."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main

from distbench.cli.app import command as built_cli
from distbench.cli.sweep import SweepArgs, load_config, refuse_mixed_options
from distbench.comm.args import CommArgs, build_comm_spec
from distbench.comm.nccl_table import float_cell, render_nccl_table
from distbench.comm.primitive_args import PrimitiveArgs
from distbench.comm.spec import CommSpec
from distbench.options.launch import ResolvedLaunch
from distbench.options.nccl import NCCL_FLAGS, resolve_dtypes
from distbench.options.opt import build_group, options_of
from distbench.parse import DTYPES, UsageError
from tests.paths import DATA

GLOO = ResolvedLaunch(backend="gloo", device="cpu", world_sizes=[2], label="", timeout_s=300)


def block(place: str) -> str:
    """One placement's cells: "  %7s  %6s  %6s  %6g", or "    N/A" for an unchecked #wrong."""
    number = r"[ \d.e+N/A-]"
    return (
        rf"  (?P<{place}_time>{number}{{7}})  (?P<{place}_algbw>{number}{{6}})"
        rf"  (?P<{place}_busbw>{number}{{6}})(?:  (?P<{place}_wrong>[ \d-]{{6}})|    N/A)"
    )


ROW_RE = re.compile(
    r"^(?P<size>[ \d]{12})  (?P<count>[ \d]{12})  (?P<type>[ \w]{8})  (?P<redop>[ \w]{6})"
    r"  (?P<root>[ \d-]{6})" + block("out") + block("in") + "$"
)
"""A result line as nccl-tests prints it: "%12li  %12li  %8s  %6s  %6s", then out-of-place and
in-place cells (block); '-' where distbench did not measure that placement."""
BOUNDS_RE = re.compile(r"^# Out of bounds values : (?P<value>\S+) ?(?P<rest>.*)$")
AVERAGE_RE = re.compile(r"^# Avg bus bandwidth    : (?P<value>\S+) ?(?P<rest>.*)$")


def command(name: str) -> Any:
    return built_cli().commands[name]  # type: ignore[attr-defined]


def parse_args(argv: list[str], name: str = "allreduce") -> CommArgs:
    """CommArgs as the command line builds them (click parses, the options' parsers convert)."""
    ctx = command(name).make_context(name, [*argv, "--backend", "gloo"])
    args: CommArgs = build_group(CommArgs, dict(ctx.params))
    return args


def spec_of(argv: list[str], primitives: tuple[str, ...] = ("all_reduce",)) -> CommSpec:
    return build_comm_spec(primitives, parse_args(argv), GLOO)


SHORT_LONG = [
    (
        "-b 8 -e 128K -f 2 -n 7 -w 3 -d float -c 1",
        "--min-size 8 --max-size 128K --factor 2 --iters 7 --warmup 3 --dtype float32 --check",
    ),
    ("-d half,bfloat16,double,int32", "--dtype float16,bfloat16,float64,int32"),
    ("-d int8,uint8,int64", "--dtype int8,uint8,int64"),
    ("-b 1K -e 1M -c 0", "--min-size 1K --max-size 1M"),
    ("-n auto -w 0", "--iters auto --warmup 0"),
    ("-d all", "--dtype all"),
]


@pytest.mark.parametrize(("short", "long"), SHORT_LONG)
def test_nccl_tests_short_flags_build_the_long_options_spec(short: str, long: str) -> None:
    made = spec_of(short.split())
    assert made == spec_of(long.split())
    assert made != spec_of([])  # the flags took effect


def test_the_short_flags_values_are_nccl_tests_forms() -> None:
    spec = spec_of(["-b", "8", "-e", "128M", "-f", "2", "-c", "1"])
    assert spec.sizes[0] == 8 and spec.sizes[-1] == 128 << 20  # binary M, as nccl-tests' parsesize
    assert spec.sizes[1] == 16 and spec.check
    assert not spec_of(["-c", "0"]).check
    assert parse_args(["-G", "3"]).cuda_graph == parse_args(["--cuda-graph", "3"]).cuda_graph == 3
    assert spec_of(["-G", "0"]).cuda_graph == 0  # nccl-tests' -G 0: off, on any backend


def test_a_short_flag_refuses_as_its_long_option() -> None:
    with pytest.raises(UsageError, match="disagree"):
        spec_of(["--check", "-c", "0"])
    with pytest.raises(typer.BadParameter, match="nccl-tests type"):
        parse_args(["-d", "uint32"])
    with pytest.raises(typer.BadParameter, match="-c takes"):
        parse_args(["-c", "yes"])


def test_dtype_all_is_every_dtype_the_primitives_take() -> None:
    assert spec_of(["--dtype", "all"]).dtypes == DTYPES
    floats = ("float32", "float64", "float16", "bfloat16")
    assert spec_of(["--dtype", "all", "--op", "avg"]).dtypes == floats  # avg reduces no int
    assert spec_of(["-d", "all"], ("broadcast",)).dtypes == DTYPES
    # NCCL's symmetric kernels (allreduce, reducescatter) serve three dtypes; allgather any
    assert resolve_dtypes(["all"], ["all_reduce"], "sum", "symmetric") == (
        "float32",
        "float16",
        "bfloat16",
    )
    assert resolve_dtypes(["all"], ["all_gather"], "sum", "symmetric") == DTYPES
    assert resolve_dtypes(["int8"], ["all_reduce"], "avg") == ("int8",)  # given: as given


def flags_of(click_command: Any) -> dict[str, list[str]]:
    """Option string -> the parameters that declare it, in one command."""
    found: dict[str, list[str]] = {}
    for param in click_command.params:
        for opt in [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]:
            found.setdefault(opt, []).append(param.name)
    return found


HELP = ("-h", "--help")
"""The app's help_option_names: click adds them where no parameter declares them."""


def collisions(root: Any) -> list[str]:
    """Every option string two parameters of one command declare (or one that the help takes),
    and every nccl-tests flag that spells another option than NCCL_FLAGS says."""
    found = []
    commands = [("distbench", root)]
    while commands:
        path, cmd = commands.pop()
        flags = flags_of(cmd)
        found += [f"{path}: {opt} on {names}" for opt, names in flags.items() if len(names) > 1]
        found += [f"{path}: {opt} hides the help" for opt in HELP if opt in flags]
        for short, long in NCCL_FLAGS.items():
            if short in flags and short != "-c" and flags[short] != flags.get(long):
                found.append(f"{path}: {short} is {flags[short]}, not {long}")
        subs = getattr(cmd, "commands", None) or {}
        commands += [(f"{path} {name}", sub) for name, sub in subs.items()]
    return found


def test_no_command_declares_a_flag_twice_and_each_nccl_flag_spells_its_option() -> None:
    root = built_cli()
    assert collisions(root) == []
    for name in ("allreduce", "broadcast", "alltoall", "sendrecv", "sweep"):
        flags = flags_of(command(name))
        assert set(NCCL_FLAGS) <= set(flags), name
        assert flags["-c"] == ["nccl_check"]


def test_the_collision_check_bites() -> None:
    toy = typer.Typer()

    @toy.command()
    def clash(
        dtype: str = typer.Option("x", "--dtype", "-d"),
        depth: str = typer.Option("y", "--depth", "-d"),
        warm: str = typer.Option("z", "-w"),
        hide: str = typer.Option("h", "-h"),
    ) -> None:
        pass

    @toy.command()
    def other() -> None:
        pass

    found = collisions(typer.main.get_command(toy))
    assert any("-d on ['dtype', 'depth']" in line for line in found), found
    assert any("-w is ['warm'], not --warmup" in line for line in found), found
    assert any("-h hides the help" in line for line in found), found


def test_params_help_says_decimal_plainly(capsys: pytest.CaptureFixture[str]) -> None:
    help_text = options_of(__import__("distbench.ddp.args", fromlist=["DdpArgs"]).DdpArgs)
    assert "decimal (10M = 10,000,000 parameters" in help_text["params"].help


def read_rows(name: str) -> list[dict[str, str]]:
    with (DATA / "cluster-a" / name / "results.csv").open() as handle:
        return list(csv.DictReader(handle))


def expected_average(rows: list[dict[str, str]]) -> float:
    """nccl-tests' figure from the rows: the mean of size / time_us_mean x busbw factor."""
    busbws = [
        int(r["size_bytes"]) / float(r["time_us_mean"]) / 1e3 * float(r["busbw_factor"])
        for r in rows
    ]
    return sum(busbws) / len(busbws)


def footer_values(text: str) -> tuple[str, float]:
    (bounds,) = [m.group("value") for m in map(BOUNDS_RE.match, text.splitlines()) if m]
    (average,) = [float(m.group("value")) for m in map(AVERAGE_RE.match, text.splitlines()) if m]
    return bounds, average


def test_nccl_table_lines_and_the_average_recomputed_from_a_checked_in_run() -> None:
    rows = [
        r for r in read_rows("allreduce") if r["world_size"] == "3" and r["mode"] == "throughput"
    ]
    text = render_nccl_table(rows)
    lines = [m for m in map(ROW_RE.match, text.splitlines()) if m]
    assert [int(m.group("size")) for m in lines] == [int(r["size_bytes"]) for r in rows]
    assert [int(m.group("count")) for m in lines] == [int(r["count"]) for r in rows]
    assert {tuple(m.group(k).strip() for k in ("type", "redop", "root")) for m in lines} == {
        ("float", "sum", "-1")
    }
    assert [float(m.group("out_time")) for m in lines] == [
        float(float_cell(float(r["time_us_mean"]), 7)) for r in rows
    ]
    assert {m.group("in_time").strip() for m in lines} == {"-"}  # in-place not measured
    assert "time = time_us_mean" in text and "slowest rank" in text
    bounds, average = footer_values(text)
    assert bounds == "0" and "# Out of bounds values : 0 OK" in text  # --check found none
    assert average == pytest.approx(expected_average(rows), rel=1e-5)  # %g: 6 digits
    dropped = render_nccl_table(rows[:-1])  # the mutation: a size less, another average
    assert footer_values(dropped)[1] == pytest.approx(expected_average(rows[:-1]), rel=1e-5)
    assert not math.isclose(footer_values(dropped)[1], average, rel_tol=1e-3)


def test_out_of_bounds_counts_wrong_rows_and_says_na_without_check() -> None:
    rows = [r for r in read_rows("allreduce") if r["world_size"] == "2" and r["mode"] == "latency"]
    wrong = [{**rows[0], "wrong": "7"}, *rows[1:]]
    assert "# Out of bounds values : 1 FAILED" in render_nccl_table(wrong)
    unchecked = [{**r, "wrong": "-1"} for r in rows]
    text = render_nccl_table(unchecked)
    assert footer_values(text)[0] == "N/A" and " 0 OK" not in text
    half = [unchecked[0], *rows[1:]]
    assert f"0 OK ({len(rows) - 1} of {len(rows)} rows checked)" in render_nccl_table(half)
    alone = render_nccl_table([{**r, "world_size": "1", "busbw_GBps": ""} for r in rows])
    assert "# Avg bus bandwidth    : N/A (no bandwidth" in alone  # world size 1: nothing moves
    busbws = [m.group("out_busbw").strip() for m in map(ROW_RE.match, alone.split("\n")) if m]
    assert busbws == ["N/A"] * len(rows)
    broadcast = render_nccl_table(read_rows("broadcast")[:2])
    assert re.search(r"\n +1024 +256 +float +none +0 ", broadcast)  # non-reducing: none, root


def test_in_place_rows_pair_with_out_of_place_and_count_in_the_average() -> None:
    rows = [
        r for r in read_rows("allreduce") if r["world_size"] == "2" and r["mode"] == "throughput"
    ]
    both = [
        {**r, "placement": p, "time_us_mean": str(float(r["time_us_mean"]) * k)}
        for r in rows
        for p, k in (("out", 1), ("in", 2))
    ]
    text = render_nccl_table(both)
    lines = [m for m in map(ROW_RE.match, text.splitlines()) if m]
    assert len(lines) == len(rows)
    assert [float(m.group("in_time")) for m in lines] == [
        float(float_cell(float(r["time_us_mean"]) * 2, 7)) for r in rows
    ]
    assert footer_values(text)[1] == pytest.approx(expected_average(both), rel=1e-5)
    assert (
        float_cell(12333.04, 7) == "12333.0" and float_cell(123456789.0, 6) == " 1e+08"
    )  # C: %6.0e


def test_sweep_config_takes_table_and_dtype_all(tmp_path: Path) -> None:
    config = tmp_path / "sweep.toml"
    config.write_text('primitives = ["allreduce"]\ndtypes = "all"\ntable = "nccl-tests"\n')
    matrix = load_config(config)
    assert matrix.comm.table == "nccl-tests"
    assert build_comm_spec(("all_reduce",), matrix.comm, GLOO).dtypes == DTYPES
    # --table only prints: it goes with --config; an option that measures does not
    refuse_mixed_options(SweepArgs(config="x"), CommArgs(table="nccl-tests"), PrimitiveArgs())
    with pytest.raises(UsageError, match="--dtype cannot be combined with --config"):
        refuse_mixed_options(SweepArgs(config="x"), parse_args(["-d", "all"]), PrimitiveArgs())


def test_gather_type_counts_are_one_ranks_as_nccl_tests_prints_them() -> None:
    """As the nccl-tests JSON export writes them (tests/unit/reports/test_export.py)."""
    rows = [r for r in read_rows("allgather") if r["mode"] == "throughput"]
    for world in ("2", "3"):
        group = [r for r in rows if r["world_size"] == world]
        lines = [m for m in map(ROW_RE.match, render_nccl_table(group).splitlines()) if m]
        # nccl-tests' count of all_gather is one rank's elements: 1K of float32 at 2 ranks, 128
        assert [int(m.group("count")) for m in lines] == [
            int(r["count"]) // int(world) for r in group
        ]
    reduce_rows = [{**r, "primitive": "all_reduce"} for r in rows if r["world_size"] == "2"]
    lines = [m for m in map(ROW_RE.match, render_nccl_table(reduce_rows).splitlines()) if m]
    assert [int(m.group("count")) for m in lines] == [int(r["count"]) for r in reduce_rows]
