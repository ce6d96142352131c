"""--api takes a comma list, as --placement, --mode and --dtype do (issue #26 item 11): each API
is a case of its own, measured in the same launch, with its rows' api column. Parsing in
process; one real 2-rank gloo run of c10d and functional all_reduce."""

from __future__ import annotations

from typing import Any

import pytest

from distbench.comm.api import parse_apis
from distbench.comm.args import CommArgs
from distbench.comm.spec import CommSpec, comm_plan_size
from distbench.options.opt import parse_group
from distbench.parse import UsageError
from tests.conftest import usage_error_line


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
