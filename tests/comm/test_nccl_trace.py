"""--nccl-trace: NCCL's TUNING lines of both documented formats parsed exactly, unknown ones left
out, the log read incrementally, and a real 2-rank gloo run: columns empty without a log, filled
from the lines a test-side wrapper writes in NCCL's format (tests/inject/nccl_log)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from distbench.collectors.schema import ResultRow
from distbench.comm.nccl_trace import Choice, NcclTrace, algo_names, parse_line, parse_version
from tests.conftest import usage_error_line

PREFIX = "gpu-node-1:12345:12400 [0] NCCL INFO "
NEW = PREFIX + "AllReduce: 4096 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}"
OLD = PREFIX + "AllReduce: 4096 Bytes -> Algo 1 proto 2 time 12.300000"
INJECT = Path(__file__).resolve().parents[1] / "inject" / "nccl_log"


def test_newer_format_names_and_channels() -> None:
    assert parse_line(NEW, (2, 21)) == ("AllReduce", 4096, Choice("RING", "SIMPLE", "4"))
    line = PREFIX + "AllGather: 1048576 Bytes -> Algo NVLS proto LL128 channel{Lo..Hi}={2..17}"
    assert parse_line(line, None) == ("AllGather", 1048576, Choice("NVLS", "LL128", "16"))


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


def _row(primitive: str, size: int, world_size: int = 2) -> ResultRow:
    values: dict[str, object] = {name: "" for name in ResultRow.__dataclass_fields__}
    values.update(primitive=primitive, size_bytes=size, world_size=world_size)
    return ResultRow(**values)


def test_reader_fills_rows_from_new_lines_only_and_waits_for_whole_lines(tmp_path: Path) -> None:
    log = tmp_path / "nccl.log"
    log.write_text(NEW + "\n" + NEW + "\n" + PREFIX + "AllReduce: 4096 Bytes -> Algo TREE pro")
    trace = NcclTrace(path=log, version=(2, 21))
    row = trace.fill(_row("all_reduce", 4096))
    assert (row.nccl_algo, row.nccl_proto, row.nccl_nchannels) == ("RING", "SIMPLE", "4")
    with open(log, "a") as handle:  # the half line completes: one TREE does not outvote two RING
        handle.write("to LL channel{Lo..Hi}={0..0}\n")
    assert trace.fill(_row("all_reduce", 4096)).nccl_algo == "RING"
    gather = PREFIX + "AllGather: 512 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}\n"
    with open(log, "a") as handle:  # newer releases: one rank's bytes of a 1024-byte gather
        handle.write(gather)
    assert trace.fill(_row("all_gather", 1024)).nccl_proto == "LL"
    assert trace.fill(_row("send_recv", 4096)).nccl_algo == ""  # point-to-point: no line
    assert trace.fill(_row("broadcast", 4096)).nccl_algo == ""  # nothing logged for it


def test_without_tracing_rows_are_unchanged(tmp_path: Path) -> None:
    row = _row("all_reduce", 4096)
    assert NcclTrace(path=None).fill(row) is row
    missing = NcclTrace(path=tmp_path / "absent.log")
    assert missing.fill(replace(row, nccl_algo="")) == row


def _run(tmp_path: Path, name: str, inject: bool) -> list[dict[str, str]]:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if inject:
        env["PYTHONPATH"] = os.pathsep.join([str(INJECT), env.get("PYTHONPATH", "")])
        env["DISTBENCH_TEST_NCCL_LOG"] = "1"
    out = tmp_path / name
    argv = [sys.executable, "-m", "distbench", "allreduce", "--world-sizes", "2", "--sizes"]
    argv += ["1K,64K", "--iters", "2", "--warmup", "1", "--trials", "2", "--nccl-trace"]
    done = subprocess.run(
        [*argv, "--out", str(out)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["worker_env"]["NCCL_DEBUG"] == "INFO"  # the rows say tracing was on
    with open(out / "results.csv", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_gloo_run_with_trace_leaves_columns_empty_and_fills_them_from_a_log(
    tmp_path: Path,
) -> None:
    plain = _run(tmp_path, "plain", inject=False)
    assert [(r["nccl_algo"], r["nccl_proto"], r["nccl_nchannels"]) for r in plain] == [
        ("", "", "")
    ] * 2
    logged = _run(tmp_path, "logged", inject=True)
    assert [
        (r["size_bytes"], r["nccl_algo"], r["nccl_proto"], r["nccl_nchannels"]) for r in logged
    ] == [
        ("1024", "RING", "SIMPLE", "4"),
        ("65536", "RING", "SIMPLE", "4"),
    ]


def test_nccl_trace_takes_no_value(capsys: pytest.CaptureFixture[str]) -> None:
    line = usage_error_line(["allreduce", "--nccl-trace=yes"], capsys)
    assert "'--nccl-trace' does not take a value" in line
