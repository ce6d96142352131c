"""--dry-run: the launch options resolved against this machine and the workload built, exactly as
a run would, then printed instead of launched. Nothing is written and torchrun is not started, so
a scheduler's wrapper (the torchx component in bench/torchx.py, a Kubernetes manifest) can check
a command line before it asks for nodes.

    distbench sweep --primitives allreduce --sizes 1M --dry-run | jq .launches

The plan is the whole of standard output (JSON, for a wrapper or jq); the line saying nothing
was launched goes to standard error.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, is_dataclass
from typing import Any


def plan_text(
    title: str, launches: Sequence[Any], workloads: Sequence[Any], out: str | None
) -> str:
    """The plan as JSON: the command, where its run directory would go, each resolved launch and
    its workload (dataclasses as dicts)."""

    def plain(value: Any) -> Any:
        return asdict(value) if is_dataclass(value) and not isinstance(value, type) else value

    plan = {
        "command": title,
        "out": out or "results/<UTC time>-<name> (made when the run starts)",
        "launches": [
            {"launch": plain(launch), "workload": plain(workload)}
            for launch, workload in zip(launches, workloads, strict=True)
        ],
    }
    return json.dumps(plan, indent=2, default=str)


NOTHING_LAUNCHED = "distbench: dry run, nothing launched"
"""Printed to standard error beside the plan."""
