"""--api takes a comma list, as --placement, --mode and --dtype do (issue #26 item 11). The half
that launches or runs for seconds; the in-process half, and the file's whole story:
tests/unit/comm/test_api_list.py."""

from __future__ import annotations

from pathlib import Path

from distbench.collectors.sink import read_rows
from distbench.comm.spec import CommSpec
from tests.conftest import CliRun, run_on_gloo_ranks


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
