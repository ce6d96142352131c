"""What `distbench init` measures (InitSpec, spec.json's workload). Torch-free: the CLI plans
with it too."""

from __future__ import annotations

from dataclasses import dataclass

from distbench.parse import UsageError

INIT_METHODS = ("env", "tcp", "file")
"""init_process_group's rendezvous: env:// (MASTER_ADDR/PORT), tcp://HOST:PORT, file://PATH."""
PHASES = ("init_process_group", "first_collective", "new_groups", "destroy_process_group")
"""What one repetition times, in order; new_groups only with --new-groups K > 0."""


@dataclass(frozen=True)
class InitSpec:
    """Start-up of a fresh process group, `trials` times per init method, in one launch."""

    methods: tuple[str, ...] = INIT_METHODS
    trials: int = 5
    """Repetitions per method, each a fresh process group giving one sample per phase."""
    new_groups: int = 0
    """K: subgroups (of every rank) created after the first collective; 0 skips the phase."""
    tag: str = ""
    """Prefix of measurement ids when one run directory holds several specs (--env combos)."""

    kind = "init"

    def __post_init__(self) -> None:
        unknown = [m for m in self.methods if m not in INIT_METHODS]
        if not self.methods or unknown:
            raise UsageError(f"init methods must be among {', '.join(INIT_METHODS)}")
        if self.trials < 1 or self.new_groups < 0:
            raise UsageError("--trials must be at least 1 and --new-groups at least 0")

    @property
    def phases(self) -> tuple[str, ...]:
        return tuple(p for p in PHASES if p != "new_groups" or self.new_groups > 0)


def plan_size(workload: InitSpec, world_size: int) -> int:
    """Rows one launch writes: one per method and phase."""
    return len(workload.methods) * len(workload.phases)
