"""results.csv of `distbench init` (schema v3): ResultRow's columns plus `phase`, so report and
compare read init rows as communication rows. One InitRow per init method and phase."""

from __future__ import annotations

from dataclasses import dataclass

from distbench.collectors.schema import ResultRow


@dataclass(frozen=True)
class InitRow(ResultRow):
    """A start-up phase of a fresh process group: primitive `init`, pattern `METHOD:PHASE` (the
    case key compare and report match on), each sample the slowest rank's time of one
    repetition (--trials)."""

    phase: str = ""
    """init_process_group, first_collective (an all_reduce of one float32: the lazy
    communicator creation), new_groups (K subgroups of every rank, --new-groups) or
    destroy_process_group. Empty in every other row (v3)."""
