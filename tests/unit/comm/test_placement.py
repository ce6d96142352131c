"""--placement in,out: all_gather and reduce_scatter timed in place and out of place on real gloo
groups with --check, rows that say which, that report and compare keep apart; gloo's wrong
in-place all_to_all (the reason the CLI refuses it there) shown on a real group; bad input."""

from __future__ import annotations

import pytest

from distbench.primitives.facts import FACTS
from tests.conftest import usage_error_line


def test_placement_gives_one_case_per_placement_out_first() -> None:
    for name in ("all_gather", "reduce_scatter", "all_to_all"):
        assert FACTS[name].case_count(2, "0", {"placements": ["in", "out"]}) == 2
        assert FACTS[name].case_count(2, "0", {}) == 1
    assert FACTS["all_reduce"].case_count(2, "0", {"placements": ["in", "out"]}) == 1


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["alltoall", "--placement", "in"], "--placement in for alltoall"),
        (["allgather", "--placement", "sideways"], "unknown --placement 'sideways'"),
        (["allgather", "--placement", ""], "placement"),
        (["allreduce", "--placement", "in"], "--placement applies to allgather"),
        (["sendrecv", "--placement", "out"], "--placement applies to allgather"),
    ],
)
def test_bad_placement_is_one_line(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = usage_error_line([*argv, "--backend", "gloo", "--world-sizes", "2"], capsys)
    assert fragment in line
