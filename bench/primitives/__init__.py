"""The registry of primitives: torch name -> implementation, and CLI command -> torch name."""

from __future__ import annotations

from distbench.primitives.all_reduce import AllReduce
from distbench.primitives.base import Primitive

PRIMITIVES: dict[str, Primitive] = {
    "all_reduce": AllReduce(),
}

COMMANDS: dict[str, str] = {
    "allreduce": "all_reduce",
}
"""CLI command name -> primitive name."""


def get_primitive(name: str) -> Primitive:
    return PRIMITIVES[name]
