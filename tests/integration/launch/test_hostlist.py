"""Slurm host lists: distbench's parser gives the same answer as `scontrol show hostnames`
where Slurm's client answers (CI brings Slurm up). Every shape alone: tests/unit/launch/."""

from __future__ import annotations

import pytest

from distbench.options.hostlist import parse_hostlist, scontrol_hostnames
from tests.unit.launch.test_hostlist import CASES


@pytest.mark.parametrize("text", list(CASES))
def test_parser_agrees_with_scontrol(text: str) -> None:
    said = scontrol_hostnames(text)
    if said is None:
        pytest.skip("no Slurm client answers here (scontrol absent or failing)")
    assert parse_hostlist(text) == said
