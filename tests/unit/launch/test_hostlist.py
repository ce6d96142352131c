"""Slurm host lists (launch/hostlist.py): every shape Slurm's grammar allows, exactly. The same
answer as `scontrol show hostnames`: tests/integration/launch/test_hostlist.py (a process)."""

from __future__ import annotations

import re

import pytest

from distbench.options.hostlist import expand_hostlist, parse_hostlist
from distbench.options.multinode import first_host, slurm_nodes
from distbench.parse import UsageError

CASES = {
    "node01": ["node01"],
    "a1,b2": ["a1", "b2"],
    "node[3]": ["node3"],
    "gpu[07-09,12],cpu1": ["gpu07", "gpu08", "gpu09", "gpu12", "cpu1"],
    "node[01-04]-ib": ["node01-ib", "node02-ib", "node03-ib", "node04-ib"],
    "rack[1-2]-gpu[01-02]": ["rack1-gpu01", "rack1-gpu02", "rack2-gpu01", "rack2-gpu02"],
    "rack[1-2]-gpu[01-04]": [f"rack{r}-gpu0{g}" for r in (1, 2) for g in range(1, 5)],
    "n[8-10]": ["n8", "n9", "n10"],
    "n[08-10]": ["n08", "n09", "n10"],
    "n[098-101]": ["n098", "n099", "n100", "n101"],
    "x[1,3]-y[5-6]z,w[00-01]": ["x1-y5z", "x1-y6z", "x3-y5z", "x3-y6z", "w00", "w01"],
    "10.0.0.[1-2]": ["10.0.0.1", "10.0.0.2"],
    "[1-2]node": ["1node", "2node"],
    " a , b ": ["a", "b"],
}


@pytest.mark.parametrize(("text", "hosts"), CASES.items())
def test_parser_expands_every_shape(text: str, hosts: list[str]) -> None:
    assert parse_hostlist(text) == hosts


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("node[1-", "'[' without ']'"),
        ("node1]", "']' without '['"),
        ("n[[1]]", "nested"),
        ("n[a-b]", "'[a-b]'"),
        ("n[3-1]", "runs backwards"),
        ("n[1-]", "'[1-]'"),
        ("", "names no host"),
        ("n[1-9999999]", "over 1000000 hosts"),
        ("a[1-1000]b[1-1000]c[1-10]", "over 1000000 hosts"),
    ],
)
def test_parser_refuses_what_slurm_would(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        parse_hostlist(text)


def test_suffixed_and_multi_range_lists_give_the_right_first_host() -> None:
    """0.2.0 read node[01-04]-ib as node01 and rack[1-2]-gpu[01-04] as rack1."""
    assert first_host("node[01-04]-ib") == "node01-ib"
    assert first_host("rack[1-2]-gpu[01-04]") == "rack1-gpu01"
    assert expand_hostlist("node[01-04]-ib")[-1] == "node04-ib"
    env = {
        "SLURM_NNODES": "4",
        "SLURM_NODEID": "1",
        "SLURM_JOB_ID": "7",
        "SLURM_STEP_ID": "0",
        "SLURM_NTASKS": "4",
        "SLURM_JOB_NODELIST": "node[01-04]-ib",
    }
    nodes = slurm_nodes(env)
    assert nodes is not None and nodes.rdzv_endpoint == "node01-ib:29500"
