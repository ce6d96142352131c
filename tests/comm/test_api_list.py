"""--api takes a comma list, as --placement, --mode and --dtype do (issue #26 item 11): each API
is a case of its own, measured in the same launch, with its rows' api column. Parsing in
process; one real 2-rank gloo run of c10d and functional all_reduce."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from distbench.collectors.sink import read_rows
from distbench.comm.api import parse_apis
from distbench.comm.args import CommArgs
from distbench.comm.spec import CommSpec, comm_plan_size
from distbench.options.opt import parse_group
from distbench.parse import UsageError
from tests.conftest import CliRun, run_on_gloo_ranks, usage_error_line


def test_a_comma_list_of_apis_parses_each_once_in_order() -> None:
    assert parse_apis("c10d") == ("c10d",)
    assert parse_apis("c10d,functional") == ("c10d", "functional")
    assert parse_apis("functional, c10d ,functional") == ("functional", "c10d")
    assert parse_apis("c10d,compiled:aot_eager") == ("c10d", "compiled:aot_eager")
    assert parse_group(CommArgs, {"api": "c10d,functional"}).api == ("c10d", "functional")
    assert CommArgs().api == ("c10d",)
    for bad, says in (("c10d,", "is not a list of APIs"), ("c10d,mpi", "unknown --api 'mpi'")):
        with pytest.raises(UsageError, match=says):
            parse_apis(bad)


def test_each_api_is_a_case_of_its_own() -> None:
    one = CommSpec(primitives=("all_reduce",), sizes=(1024, 4096))
    two = CommSpec(primitives=("all_reduce",), sizes=(1024, 4096), api=("c10d", "functional"))
    assert comm_plan_size(two, 2) == 2 * comm_plan_size(one, 2) == 4
    # a spec.json of 0.2.0 holds one api as text: it still loads
    old: dict[str, Any] = {"primitives": ("all_reduce",), "sizes": (1,), "api": "functional"}
    assert CommSpec(**old).api == ("functional",)


def test_an_api_that_cannot_run_a_primitive_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    line = usage_error_line(
        ["sendrecv", "--api", "c10d,functional", "--backend", "gloo", "--dry-run"], capsys
    )
    assert "--api functional cannot run send_recv" in line


def sequential_apis(rank: int, size: int) -> list[tuple[str, str, str]]:
    """run_sequential of a two-api plan on this rank of a real gloo group: (measurement, api,
    wrong) of every row it would write."""
    import torch

    from distbench.comm.nccl_trace import open_trace
    from distbench.comm.runner import run_sequential
    from distbench.primitives.base import Context

    ctx = Context(rank, size, torch.device("cpu"), "gloo", global_ranks=tuple(range(size)))
    workload = CommSpec(
        primitives=("all_reduce",), sizes=(1024,), api=("c10d", "functional"), iters=2,
        warmup=1, trials=2, check=True,
    )  # fmt: skip
    rows: list[tuple[str, str, str]] = []
    run_sequential(
        ctx, workload, set(), lambda line: None,
        lambda measurement, _p, _d, _r, result: rows.append(
            (measurement, result.api, str(result.wrong))
        ),
        open_trace(False, Path(".")),
    )  # fmt: skip
    return rows


def test_sequential_order_gives_each_api_its_own_measurement(tmp_path: Path) -> None:
    for rows in run_on_gloo_ranks(sequential_apis, 2, tmp_path / "store"):
        assert rows == [("ws2/i0", "c10d", "0"), ("ws2/i1", "functional", "0")]


def test_a_real_run_measures_every_api_in_one_launch(two_apis: CliRun) -> None:
    """Through the CLI, in interleaved order (the nightly's): every API's trials in the same
    rounds, each row with its api, checked bit-exactly (conftest.py's `two_apis`, which
    test_api.py reports and compares too)."""
    out, done = two_apis.out, two_apis.done
    assert done.returncode == 0, done.stderr
    rows = read_rows(out / "results.csv")
    assert [(r["api"], r["size_bytes"], r["wrong"]) for r in rows] == [
        ("c10d", "1024", "0"),
        ("c10d", "4096", "0"),
        ("functional", "1024", "0"),
        ("functional", "4096", "0"),
    ]
    assert len({r["measurement"] for r in rows}) == 4
    assert "api" in next(line for line in done.stdout.splitlines() if line.startswith("#  "))
