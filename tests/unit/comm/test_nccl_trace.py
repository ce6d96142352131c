"""--nccl-trace: NCCL's TUNING lines of both documented formats and its [Symmetric] lines parsed
exactly, unknown ones left out; each row's choice read from its own window of the log (the
harness's calls of the same size are not merged in); NCCL's warnings copied back into the rank's
log; and a real 2-rank gloo run: columns empty without a log, filled from the lines a test-side
wrapper writes in NCCL's format (tests/inject/nccl_log), its warning in the rank log."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from distbench.collectors.schema import ResultRow
from distbench.comm.nccl_log import WarningForwarder
from distbench.comm.nccl_trace import Choice, NcclTrace, algo_names, parse_line, parse_version
from tests.conftest import usage_error_line

PREFIX = "gpu-node-1:12345:12400 [0] NCCL INFO "
NEW = PREFIX + "AllReduce: 4096 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}"
OLD = PREFIX + "AllReduce: 4096 Bytes -> Algo 1 proto 2 time 12.300000"


def test_newer_format_names_and_channels() -> None:
    assert parse_line(NEW, (2, 21)) == ("AllReduce", 4096, Choice("RING", "SIMPLE", "4"))
    line = PREFIX + "AllGather: 1048576 Bytes -> Algo NVLS proto LL128 channel{Lo..Hi}={2..17}"
    assert parse_line(line, None) == ("AllGather", 1048576, Choice("NVLS", "LL128", "16"))


def test_symmetric_lines_name_the_kernel() -> None:
    """NCCL 2.28+ (scheduler/symmetric_sched.cc) and 2.27 (enqueue.cc, without nWorks)."""
    line = PREFIX + (
        "AllReduce [Symmetric]: 4096 Bytes -> Kernel AllReduce_AGxLL_R nchannels 2 nthreads 512 "
        "nWorks 1"
    )
    parsed = parse_line(line, (2, 28))
    assert parsed == ("AllReduce", 4096, Choice("AllReduce_AGxLL_R", "", "2", True))
    old = (
        PREFIX
        + "AllGather [Symmetric]: 65536 Bytes -> Kernel AllGather_ST nchannels 16 nthreads 256"
    )
    assert parse_line(old, (2, 27)) == ("AllGather", 65536, Choice("AllGather_ST", "", "16", True))
    assert parse_line(NEW, (2, 28))[2].symmetric is False


def test_older_format_maps_enum_numbers_by_version() -> None:
    assert parse_line(OLD, (2, 18)) == ("AllReduce", 4096, Choice("RING", "SIMPLE", ""))
    tree_ll = PREFIX + "Broadcast: 64 Bytes -> Algo 0 proto 0 time 5.0"
    assert parse_line(tree_ll, (2, 12)) == ("Broadcast", 64, Choice("TREE", "LL", ""))
    nvls = PREFIX + "AllReduce: 8 Bytes -> Algo 4 proto 1 time 1.0"
    assert parse_line(nvls, (2, 17))[2] == Choice("NVLS", "LL128", "")
    assert parse_line(nvls, (2, 16)) is None  # no NVLS before 2.17: never a guess
    pat = PREFIX + "AllGather: 8 Bytes -> Algo 6 proto 2 time 1.0"
    assert parse_line(pat, (2, 23))[2].algo == "PAT"
    assert parse_line(pat, (2, 22)) is None


def test_enum_tables_and_versions() -> None:
    assert algo_names((2, 12)) == ("TREE", "RING", "COLLNET")
    assert algo_names((2, 19))[5] == "NVLS_TREE"
    assert algo_names(None)[-1] == "PAT"
    assert parse_version("2.21.5") == (2, 21)
    assert parse_version("") is None


@pytest.mark.parametrize(
    "line",
    [
        PREFIX + "Init COMPLETE",
        PREFIX + "AllReduce: 4096 Bytes -> Algo 1 proto SIMPLE time 1.0",  # mixed: unknown
        PREFIX + "AllReduce: 4096 Bytes -> Algorithm RING protocol SIMPLE",  # another release
        "AllReduce: 4096 Bytes -> Algo RING proto SIMPLE",  # not from NCCL's logger
        PREFIX + "AllReduce: 4096 Bytes -> Algo 9 proto 2 time 1.0",  # beyond every enum
    ],
)
def test_unknown_lines_are_ignored(line: str) -> None:
    assert parse_line(line, (2, 21)) is None


def _row(primitive: str, size: int, world_size: int = 2, measurement: str = "ws2/i0") -> ResultRow:
    values: dict[str, object] = {name: "" for name in ResultRow.__dataclass_fields__}
    values.update(
        primitive=primitive, size_bytes=size, world_size=world_size, measurement=measurement
    )
    return ResultRow(**values)


def _append(log: Path, *lines: str) -> None:
    with open(log, "a") as handle:
        handle.write("".join(line + "\n" for line in lines))


def test_a_row_takes_the_choice_of_its_own_window_and_whole_lines(tmp_path: Path) -> None:
    log = tmp_path / "nccl.log"
    log.write_text("")
    trace = NcclTrace(path=log, version=(2, 21))
    with trace.window("ws2/i0"):
        _append(log, NEW, NEW)
        with open(log, "a") as handle:  # a line NCCL is still writing
            handle.write(PREFIX + "AllReduce: 4096 Bytes -> Algo TREE pro")
    row = trace.fill(_row("all_reduce", 4096))
    assert (row.nccl_algo, row.nccl_proto, row.nccl_nchannels) == ("RING", "SIMPLE", "4")
    assert row.nccl_symmetric == "false"  # NCCL's regular kernels
    gather = PREFIX + "AllGather: 512 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}"
    with trace.window("ws2/i1"):  # newer releases: one rank's bytes of a 1024-byte gather
        _append(log, "to LL channel{Lo..Hi}={0..0}", gather)  # the half line ends: before i1
    assert trace.fill(_row("all_gather", 1024, measurement="ws2/i1")).nccl_proto == "LL"
    assert trace.fill(_row("all_reduce", 4096, measurement="ws2/i1")).nccl_algo == ""
    assert trace.fill(_row("send_recv", 4096)).nccl_algo == ""  # point-to-point: no line
    assert trace.fill(_row("all_reduce", 4096, measurement="ws2/i9")).nccl_algo == ""  # no window


def test_the_harness_calls_of_the_same_size_are_not_merged_in(tmp_path: Path) -> None:
    """A 16-byte all_reduce row beside the harness's own 16-byte reductions (the maximum over
    ranks of two float64 samples, logged before and after the row's warm-up): more of those than
    of the row's calls, with another choice. The row keeps its own."""
    log = tmp_path / "nccl.log"
    harness = PREFIX + "AllReduce: 16 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..0}"
    mine = PREFIX + "AllReduce: 16 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}"
    log.write_text("")
    trace = NcclTrace(path=log, version=(2, 21))
    _append(log, harness, harness, harness)
    with trace.window("ws2/i0"):
        _append(log, mine, mine)
    _append(log, harness, harness, harness)
    row = trace.fill(_row("all_reduce", 16))
    assert (row.nccl_algo, row.nccl_nchannels) == ("RING", "2")


def test_symmetric_rows_say_which_kernels_ran(tmp_path: Path) -> None:
    log = tmp_path / "nccl.log"
    log.write_text("")
    trace = NcclTrace(path=log, version=(2, 28))
    symmetric = PREFIX + "AllReduce [Symmetric]: 4096 Bytes -> Kernel AllReduce_RSxLD_AGxST "
    with trace.window("ws2/i0"):
        _append(log, symmetric + "nchannels 8 nthreads 512 nWorks 1")
    with trace.window("ws2/i1"):  # avg on a release without symmetric avg: regular kernels
        _append(log, NEW)
    first, second = (
        trace.fill(_row("all_reduce", 4096)),
        trace.fill(_row("all_reduce", 4096, measurement="ws2/i1")),
    )
    assert (first.nccl_symmetric, first.nccl_algo) == ("true", "AllReduce_RSxLD_AGxST")
    assert (second.nccl_symmetric, second.nccl_algo) == ("false", "RING")


def test_nccl_warnings_go_back_into_the_rank_log(tmp_path: Path) -> None:
    log, rank_log = tmp_path / "nccl.log", tmp_path / "rank.log"
    warning = "gpu-node-1:1:2 [0] transport.cc:154 (ncclTransportP2pSetup) NCCL WARN Connect failed"
    log.write_text(NEW + "\n\n" + warning + "\n")
    with open(rank_log, "w") as sink:
        forwarder = WarningForwarder(log, fd=sink.fileno())
        assert forwarder.forward() == 1
        _append(log, NEW)
        assert forwarder.forward() == 0  # nothing new to copy, nothing copied twice
    assert rank_log.read_text() == warning + "\n"


def test_without_tracing_rows_are_unchanged(tmp_path: Path) -> None:
    row = _row("all_reduce", 4096)
    assert NcclTrace(path=None).fill(row) is row
    missing = NcclTrace(path=tmp_path / "absent.log")
    with missing.window("ws2/i0"):
        pass
    assert missing.fill(replace(row, nccl_algo="")) == row


def test_nccl_trace_takes_no_value(capsys: pytest.CaptureFixture[str]) -> None:
    line = usage_error_line(["allreduce", "--nccl-trace=yes"], capsys)
    assert "'--nccl-trace' does not take a value" in line
