"""--api c10d|functional|compiled (#15 §2): the values and refusals (torch-free parsing), the
checks of the functional cases catching a wrong element, and real gloo launches of every
primitive that has a functional form, eager and compiled, with --check, through report and
compare."""

from __future__ import annotations

import pytest
import torch

from distbench.comm.api import FUNCTIONAL_PRIMITIVES, check_api, parse_api
from distbench.parse import UsageError
from distbench.primitives.all_gather import gathered_check
from distbench.primitives.all_to_all import exchanged_check
from distbench.primitives.all_to_allv import split_check
from distbench.primitives.base import Context
from distbench.primitives.broadcast import moved_check
from distbench.primitives.forms import reduced_check
from tests.conftest import usage_error_line

CPU = torch.device("cpu")


# --- parsing and refusals -----------------------------------------------------------------------


def test_parse_api_values() -> None:
    assert parse_api("c10d") == "c10d"
    assert parse_api(" Functional ") == "functional"
    assert parse_api("compiled:aot_eager") == "compiled:aot_eager"
    assert parse_api("compiled:inductor") == "compiled:inductor"
    assert parse_api("compiled") in ("compiled:inductor", "compiled:aot_eager")


def test_compiled_without_a_cxx_compiler_falls_back_to_aot_eager(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CXX", "/nonexistent/c++")
    assert parse_api("compiled") == "compiled:aot_eager"


def test_reduce_and_send_recv_have_no_functional_form() -> None:
    check_api("functional", FUNCTIONAL_PRIMITIVES)  # accepted
    check_api("c10d", ("reduce", "send_recv"))
    for api in ("functional", "compiled:aot_eager"):
        with pytest.raises(UsageError, match="no functional collective"):
            check_api(api, ("all_reduce", "reduce"))


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["allreduce", "--api", "nccl"], "unknown --api 'nccl'"),
        (["allreduce", "--api", "compiled:eager"], "unknown --api 'compiled:eager'"),
        (["allreduce", "--api", "functional:inductor"], "unknown --api"),
        (["allreduce", "--api", "compiled:"], "names no compile backend"),
        (["reduce", "--api", "functional"], "cannot run reduce"),
        (["sendrecv", "--api", "compiled"], "cannot run send_recv"),
        (["sweep", "--primitives", "all", "--api", "functional"], "cannot run reduce, send_recv"),
    ],
)
def test_bad_api_is_one_line(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = usage_error_line([*argv, "--world-sizes", "2", "--sizes", "1K", "--dry-run"], capsys)
    assert expected in line


# --- the checks catch what they must (world size 1: the collective is the identity) ------------


def one_rank() -> Context:
    return Context(rank=0, world_size=1, device=CPU, backend="gloo", global_ranks=(0,))


def spoiled(tensor: torch.Tensor) -> torch.Tensor:
    out = tensor.clone()
    out[3] += 1
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bfloat16])
def test_functional_checks_pass_right_and_count_wrong_results(dtype: torch.dtype) -> None:
    ctx = one_rank()
    checks = [
        reduced_check(ctx, "sum", 0),
        reduced_check(ctx, "max", 0),
        gathered_check(ctx, 64),
        exchanged_check(ctx, 64),
        moved_check(ctx, 0),
        split_check(ctx, [[64]]),
    ]
    for check in checks:
        assert check(lambda t: t.clone(), dtype, 64) == 0
        assert check(spoiled, dtype, 64) == 1
        assert check(lambda t: torch.zeros_like(t), dtype, 64) == 64
