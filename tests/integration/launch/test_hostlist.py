"""Slurm host lists: distbench's parser gives the same answer as `scontrol show hostnames`
where Slurm's client answers (CI brings Slurm up). Every shape alone: tests/unit/launch/."""

from __future__ import annotations

import pytest

from distbench.options.hostlist import expand_hostlist, parse_hostlist, scontrol_hostnames
from tests.unit.launch.test_hostlist import CASES

BEYOND_SOME_SLURM = {"node[01-04]-ib", "x[1,3]-y[5-6]z,w[00-01]", "[1-2]node"}
"""Shapes Slurm 22.05's client rejects ('Invalid hostlist': text after a range, or a range
first), which SLURM_JOB_NODELIST never holds there; the parser expands them (unit tests)."""


@pytest.mark.parametrize("text", list(CASES))
def test_parser_agrees_with_scontrol(text: str) -> None:
    """Where scontrol expands a shape, the parser says the same; where it rejects one, it is one
    of BEYOND_SOME_SLURM and expand_hostlist falls back to the parser."""
    if scontrol_hostnames("node01") is None:
        pytest.skip("no Slurm client answers here (absent, or no slurm.conf: CI brings one up)")
    said = scontrol_hostnames(text)
    if said is None:
        assert text in BEYOND_SOME_SLURM, f"scontrol rejects {text!r}"
        assert expand_hostlist(text) == parse_hostlist(text) == CASES[text]
        return
    assert parse_hostlist(text) == said
