"""gather, the primitive added by its file, its facts and a registry line (#28 item 1): nccl-tests'
size and busbw conventions, its check on a real gloo group (every root, right results pass),
--api functional|compiled refused in one line, and `distbench gather --check` failing under each
test-side corruption of the real gather (tests/inject/gather_faults: rotate, swap, skip, wrong
root). The in-process mutation suite (tests/mutation) covers it too."""

from __future__ import annotations

import pytest

from distbench.primitives.facts import COMMANDS, FACTS
from tests.conftest import usage_error_line


def test_gather_facts_follow_nccl_tests_gather() -> None:
    facts = FACTS["gather"]
    assert COMMANDS["gather"] == "gather" and facts.rooted and not facts.reduces
    assert facts.busbw_factor(4) == 0.75  # GatherGetBw: (n-1)/n
    assert facts.count_multiple(3, 4) == 3  # count/nranks whole elements, no 16-byte alignment
    assert facts.case_count(3, "all", {}) == 3 and facts.case_count(3, "1", {}) == 1
    assert not (facts.functional or facts.graph or facts.symmetric or facts.overlap)
    assert facts.nccl_name == ""  # NCCL runs it as grouped send/recv: no TUNING line


@pytest.mark.parametrize("api", ["functional", "compiled:aot_eager"])
def test_gather_refuses_the_functional_apis(api: str, capsys: pytest.CaptureFixture[str]) -> None:
    line = usage_error_line(["gather", "--api", api, "--backend", "gloo", "--dry-run"], capsys)
    assert "cannot run gather: torch has no functional collective" in line
